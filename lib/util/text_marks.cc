// SPDX-License-Identifier: MIT
#include "util/text_marks.h"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace logrx::detail {
namespace {

// The scalar form, for the end of a text and for hosts without SSE2.
void find_marks_scalar(const unsigned char* p, std::size_t n, TextMarks& marks) {
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char c = p[i];
    if (c == '\\') marks.backslash = true;
    if (i + 4 > n) continue;
    if ((c | 0x20) == 'r' && (p[i + 1] | 0x20) == 'r' && (p[i + 2] | 0x20) == 'o' && (p[i + 3] | 0x20) == 'r')
      marks.rror = true;
    if (c == 'T' && p[i + 1] == 'r' && p[i + 2] == 'a' && p[i + 3] == 'c') marks.traceback = true;
  }
}

}  // namespace

TextMarks find_marks(std::string_view text) {
  TextMarks marks;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t n = text.size();
  std::size_t i = 0;
#if defined(__SSE2__)
  // Sixteen positions at a time: the bytes at each of the mark's four
  // offsets, compared at once (case folded by setting bit 5 for "rror").
  const __m128i fold = _mm_set1_epi8(0x20);
  const __m128i r = _mm_set1_epi8('r');
  const __m128i o = _mm_set1_epi8('o');
  const __m128i upper_t = _mm_set1_epi8('T');
  const __m128i a = _mm_set1_epi8('a');
  const __m128i c = _mm_set1_epi8('c');
  const __m128i backslash = _mm_set1_epi8('\\');
  __m128i any_backslash = _mm_setzero_si128();
  __m128i any_rror = _mm_setzero_si128();
  __m128i any_trac = _mm_setzero_si128();
  for (; i + 16 + 3 <= n; i += 16) {
    __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 1));
    __m128i b2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 2));
    __m128i b3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 3));
    any_backslash = _mm_or_si128(any_backslash, _mm_cmpeq_epi8(b0, backslash));
    __m128i rror = _mm_and_si128(
        _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(b0, fold), r), _mm_cmpeq_epi8(_mm_or_si128(b1, fold), r)),
        _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(b2, fold), o), _mm_cmpeq_epi8(_mm_or_si128(b3, fold), r)));
    any_rror = _mm_or_si128(any_rror, rror);
    __m128i trac = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(b0, upper_t), _mm_cmpeq_epi8(b1, r)),
                                 _mm_and_si128(_mm_cmpeq_epi8(b2, a), _mm_cmpeq_epi8(b3, c)));
    any_trac = _mm_or_si128(any_trac, trac);
  }
  marks.backslash = _mm_movemask_epi8(any_backslash) != 0;
  marks.rror = _mm_movemask_epi8(any_rror) != 0;
  marks.traceback = _mm_movemask_epi8(any_trac) != 0;
#endif
  // The positions the vector loop did not reach.
  TextMarks rest;
  find_marks_scalar(p + i, n - i, rest);
  marks.backslash = marks.backslash || rest.backslash;
  marks.rror = marks.rror || rest.rror;
  marks.traceback = marks.traceback || rest.traceback;
  return marks;
}

}  // namespace logrx::detail
