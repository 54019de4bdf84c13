// SPDX-License-Identifier: MIT
#include "util/text_marks.h"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LOGRX_HAVE_AVX2_PATH 1
#endif

namespace logrx::detail {
namespace {

bool notation_at(const unsigned char* p, std::size_t left) {
  if (left < 2) return false;
  unsigned char c = p[0];
  unsigned char d = p[1];
  if (c == '^') return d == '[' || d == 'M';
  if (left < 3) return false;
  if (c == '[') return d == '0' && (p[2] == 'm' || p[2] == ';');
  if (left < 4) return false;
  if (c == '#') return d == '0' && ((p[2] == '3' && p[3] == '3') || (p[2] == '1' && p[3] == '5'));
  return false;
}

// The scalar form, for the end of a text and for hosts without SSE2.
void find_marks_scalar(const unsigned char* p, std::size_t n, TextMarks& marks) {
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char c = p[i];
    if (c == '\\') marks.backslash = true;
    if (c >= 0x80 || c == 0x1b || c == '\r' || c == 0) marks.unclean = true;
    if (notation_at(p + i, n - i)) marks.notation = true;
    if (i + 4 > n) continue;
    if ((c | 0x20) == 'r' && (p[i + 1] | 0x20) == 'r' && (p[i + 2] | 0x20) == 'o' && (p[i + 3] | 0x20) == 'r')
      marks.rror = true;
    if (((c | 0x20) == 'f' && (p[i + 2] | 0x20) == 'i' && (p[i + 3] | 0x20) == 'l') ||
        ((c | 0x20) == 'b' && (p[i + 2] | 0x20) == 'r' && (p[i + 3] | 0x20) == 't') ||
        ((c | 0x20) == 'k' && (p[i + 2] | 0x20) == 'l' && (p[i + 3] | 0x20) == 'l'))
      marks.fail = true;
    if (c == 'T' && p[i + 1] == 'r' && p[i + 2] == 'a' && p[i + 3] == 'c') marks.traceback = true;
  }
}

#if defined(LOGRX_HAVE_AVX2_PATH)
// Thirty-two positions at a time where the CPU has AVX2 (chosen at run
// time: the build targets plain x86-64). Returns the index it stopped at.
__attribute__((target("avx2"))) std::size_t find_marks_avx2(const unsigned char* p, std::size_t n,
                                                            TextMarks& marks) {
  const __m256i fold = _mm256_set1_epi8(0x20);
  __m256i any_backslash = _mm256_setzero_si256();
  __m256i any_rror = _mm256_setzero_si256();
  __m256i any_trac = _mm256_setzero_si256();
  __m256i any_notation = _mm256_setzero_si256();
  __m256i any_unclean = _mm256_setzero_si256();
  __m256i any_fail = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 32 + 3 <= n; i += 32) {
    __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    // High bytes (their sign bit), ESC, CR and NUL.
    any_unclean = _mm256_or_si256(
        any_unclean,
        _mm256_or_si256(_mm256_or_si256(b0, _mm256_cmpeq_epi8(b0, _mm256_set1_epi8(0x1b))),
                        _mm256_or_si256(_mm256_cmpeq_epi8(b0, _mm256_set1_epi8('\r')),
                                        _mm256_cmpeq_epi8(b0, _mm256_setzero_si256()))));
    __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 1));
    __m256i b2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 2));
    __m256i b3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 3));
    any_backslash = _mm256_or_si256(any_backslash, _mm256_cmpeq_epi8(b0, _mm256_set1_epi8('\\')));
    __m256i f0 = _mm256_or_si256(b0, fold);
    __m256i f1 = _mm256_or_si256(b1, fold);
    __m256i f2 = _mm256_or_si256(b2, fold);
    __m256i f3 = _mm256_or_si256(b3, fold);
    __m256i rror = _mm256_and_si256(
        _mm256_and_si256(_mm256_cmpeq_epi8(f0, _mm256_set1_epi8('r')), _mm256_cmpeq_epi8(f1, _mm256_set1_epi8('r'))),
        _mm256_and_si256(_mm256_cmpeq_epi8(f2, _mm256_set1_epi8('o')), _mm256_cmpeq_epi8(f3, _mm256_set1_epi8('r'))));
    any_rror = _mm256_or_si256(any_rror, rror);
    // "f?il", "k?ll", "b?rt": the second letter is not compared (a look-alike
    // such as "foil" only costs the line-by-line check the mark gates).
    __m256i l3 = _mm256_cmpeq_epi8(f3, _mm256_set1_epi8('l'));
    __m256i fail = _mm256_and_si256(_mm256_and_si256(_mm256_cmpeq_epi8(f0, _mm256_set1_epi8('f')), l3),
                                    _mm256_cmpeq_epi8(f2, _mm256_set1_epi8('i')));
    __m256i kill = _mm256_and_si256(_mm256_and_si256(_mm256_cmpeq_epi8(f0, _mm256_set1_epi8('k')), l3),
                                    _mm256_cmpeq_epi8(f2, _mm256_set1_epi8('l')));
    __m256i bort = _mm256_and_si256(
        _mm256_and_si256(_mm256_cmpeq_epi8(f0, _mm256_set1_epi8('b')), _mm256_cmpeq_epi8(f2, _mm256_set1_epi8('r'))),
        _mm256_cmpeq_epi8(f3, _mm256_set1_epi8('t')));
    any_fail = _mm256_or_si256(any_fail, _mm256_or_si256(_mm256_or_si256(fail, bort), kill));
    __m256i trac = _mm256_and_si256(
        _mm256_and_si256(_mm256_cmpeq_epi8(b0, _mm256_set1_epi8('T')), _mm256_cmpeq_epi8(b1, _mm256_set1_epi8('r'))),
        _mm256_and_si256(_mm256_cmpeq_epi8(b2, _mm256_set1_epi8('a')), _mm256_cmpeq_epi8(b3, _mm256_set1_epi8('c'))));
    any_trac = _mm256_or_si256(any_trac, trac);
    // "[0m" "[0;", "^[" "^M", "#033" "#015".
    __m256i zero1 = _mm256_cmpeq_epi8(b1, _mm256_set1_epi8('0'));
    __m256i bracket = _mm256_and_si256(
        _mm256_and_si256(_mm256_cmpeq_epi8(b0, _mm256_set1_epi8('[')), zero1),
        _mm256_or_si256(_mm256_cmpeq_epi8(b2, _mm256_set1_epi8('m')), _mm256_cmpeq_epi8(b2, _mm256_set1_epi8(';'))));
    __m256i caret = _mm256_and_si256(
        _mm256_cmpeq_epi8(b0, _mm256_set1_epi8('^')),
        _mm256_or_si256(_mm256_cmpeq_epi8(b1, _mm256_set1_epi8('[')), _mm256_cmpeq_epi8(b1, _mm256_set1_epi8('M'))));
    __m256i octal = _mm256_and_si256(
        _mm256_and_si256(_mm256_cmpeq_epi8(b0, _mm256_set1_epi8('#')), zero1),
        _mm256_or_si256(
            _mm256_and_si256(_mm256_cmpeq_epi8(b2, _mm256_set1_epi8('3')), _mm256_cmpeq_epi8(b3, _mm256_set1_epi8('3'))),
            _mm256_and_si256(_mm256_cmpeq_epi8(b2, _mm256_set1_epi8('1')), _mm256_cmpeq_epi8(b3, _mm256_set1_epi8('5')))));
    any_notation = _mm256_or_si256(any_notation, _mm256_or_si256(bracket, _mm256_or_si256(caret, octal)));
  }
  marks.backslash = _mm256_movemask_epi8(any_backslash) != 0;
  marks.rror = _mm256_movemask_epi8(any_rror) != 0;
  marks.traceback = _mm256_movemask_epi8(any_trac) != 0;
  marks.notation = _mm256_movemask_epi8(any_notation) != 0;
  marks.unclean = _mm256_movemask_epi8(any_unclean) != 0;
  marks.fail = _mm256_movemask_epi8(any_fail) != 0;
  return i;
}

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
}
#endif

#if defined(__SSE2__)
std::size_t find_marks_sse2(const unsigned char* p, std::size_t n, TextMarks& marks) {
  // Sixteen positions at a time: the bytes at each of the mark's four
  // offsets, compared at once (case folded by setting bit 5 for "rror").
  const __m128i fold = _mm_set1_epi8(0x20);
  __m128i any_backslash = _mm_setzero_si128();
  __m128i any_rror = _mm_setzero_si128();
  __m128i any_trac = _mm_setzero_si128();
  __m128i any_notation = _mm_setzero_si128();
  __m128i any_unclean = _mm_setzero_si128();
  __m128i any_fail = _mm_setzero_si128();
  std::size_t i = 0;
  for (; i + 16 + 3 <= n; i += 16) {
    __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    any_unclean = _mm_or_si128(
        any_unclean, _mm_or_si128(_mm_or_si128(b0, _mm_cmpeq_epi8(b0, _mm_set1_epi8(0x1b))),
                                  _mm_or_si128(_mm_cmpeq_epi8(b0, _mm_set1_epi8('\r')),
                                               _mm_cmpeq_epi8(b0, _mm_setzero_si128()))));
    __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 1));
    __m128i b2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 2));
    __m128i b3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 3));
    any_backslash = _mm_or_si128(any_backslash, _mm_cmpeq_epi8(b0, _mm_set1_epi8('\\')));
    __m128i rror = _mm_and_si128(
        _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(b0, fold), _mm_set1_epi8('r')),
                      _mm_cmpeq_epi8(_mm_or_si128(b1, fold), _mm_set1_epi8('r'))),
        _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(b2, fold), _mm_set1_epi8('o')),
                      _mm_cmpeq_epi8(_mm_or_si128(b3, fold), _mm_set1_epi8('r'))));
    any_rror = _mm_or_si128(any_rror, rror);
    __m128i f0 = _mm_or_si128(b0, fold);
    __m128i f2 = _mm_or_si128(b2, fold);
    __m128i f3 = _mm_or_si128(b3, fold);
    __m128i l3 = _mm_cmpeq_epi8(f3, _mm_set1_epi8('l'));
    __m128i fail = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(f0, _mm_set1_epi8('f')), l3),
                                 _mm_cmpeq_epi8(f2, _mm_set1_epi8('i')));
    __m128i kill = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(f0, _mm_set1_epi8('k')), l3),
                                 _mm_cmpeq_epi8(f2, _mm_set1_epi8('l')));
    __m128i bort = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(f0, _mm_set1_epi8('b')), _mm_cmpeq_epi8(f2, _mm_set1_epi8('r'))),
                                 _mm_cmpeq_epi8(f3, _mm_set1_epi8('t')));
    any_fail = _mm_or_si128(any_fail, _mm_or_si128(_mm_or_si128(fail, bort), kill));
    __m128i trac = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(b0, _mm_set1_epi8('T')), _mm_cmpeq_epi8(b1, _mm_set1_epi8('r'))),
                                 _mm_and_si128(_mm_cmpeq_epi8(b2, _mm_set1_epi8('a')), _mm_cmpeq_epi8(b3, _mm_set1_epi8('c'))));
    any_trac = _mm_or_si128(any_trac, trac);
    __m128i zero1 = _mm_cmpeq_epi8(b1, _mm_set1_epi8('0'));
    __m128i bracket = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(b0, _mm_set1_epi8('[')), zero1),
                                    _mm_or_si128(_mm_cmpeq_epi8(b2, _mm_set1_epi8('m')), _mm_cmpeq_epi8(b2, _mm_set1_epi8(';'))));
    __m128i caret = _mm_and_si128(_mm_cmpeq_epi8(b0, _mm_set1_epi8('^')),
                                  _mm_or_si128(_mm_cmpeq_epi8(b1, _mm_set1_epi8('[')), _mm_cmpeq_epi8(b1, _mm_set1_epi8('M'))));
    __m128i octal = _mm_and_si128(
        _mm_and_si128(_mm_cmpeq_epi8(b0, _mm_set1_epi8('#')), zero1),
        _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(b2, _mm_set1_epi8('3')), _mm_cmpeq_epi8(b3, _mm_set1_epi8('3'))),
                     _mm_and_si128(_mm_cmpeq_epi8(b2, _mm_set1_epi8('1')), _mm_cmpeq_epi8(b3, _mm_set1_epi8('5')))));
    any_notation = _mm_or_si128(any_notation, _mm_or_si128(bracket, _mm_or_si128(caret, octal)));
  }
  marks.backslash = _mm_movemask_epi8(any_backslash) != 0;
  marks.rror = _mm_movemask_epi8(any_rror) != 0;
  marks.traceback = _mm_movemask_epi8(any_trac) != 0;
  marks.notation = _mm_movemask_epi8(any_notation) != 0;
  marks.unclean = _mm_movemask_epi8(any_unclean) != 0;
  marks.fail = _mm_movemask_epi8(any_fail) != 0;
  return i;
}
#endif

}  // namespace

TextMarks find_marks(std::string_view text) {
  TextMarks marks;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t n = text.size();
  std::size_t i = 0;
#if defined(LOGRX_HAVE_AVX2_PATH)
  if (cpu_has_avx2()) {
    i = find_marks_avx2(p, n, marks);
  } else
#endif
  {
#if defined(__SSE2__)
    i = find_marks_sse2(p, n, marks);
#endif
  }
  // The positions the vector loop did not reach.
  TextMarks rest;
  find_marks_scalar(p + i, n - i, rest);
  marks.backslash = marks.backslash || rest.backslash;
  marks.rror = marks.rror || rest.rror;
  marks.traceback = marks.traceback || rest.traceback;
  marks.notation = marks.notation || rest.notation;
  marks.unclean = marks.unclean || rest.unclean;
  marks.fail = marks.fail || rest.fail;
  return marks;
}

}  // namespace logrx::detail
