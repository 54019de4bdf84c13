// SPDX-License-Identifier: MIT
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "logrx/line.h"
#include "util/text_marks.h"

namespace logrx {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at text[i], 0 when invalid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
std::size_t valid_utf8_length(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  std::size_t remaining = text.size() - i;
  auto cont = [&](std::size_t k) { return (byte(k) & 0xC0) == 0x80; };
  if (lead >= 0xC2 && lead <= 0xDF) {
    return remaining >= 2 && cont(i + 1) ? 2 : 0;
  }
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (remaining < 3 || !cont(i + 1) || !cont(i + 2)) return 0;
    unsigned char second = byte(i + 1);
    if (lead == 0xE0 && second < 0xA0) return 0;  // overlong
    if (lead == 0xED && second > 0x9F) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (remaining < 4 || !cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    unsigned char second = byte(i + 1);
    if (lead == 0xF0 && second < 0x90) return 0;  // overlong
    if (lead == 0xF4 && second > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

// Index just past the escape sequence starting with ESC at text[i].
std::size_t skip_escape(std::string_view text, std::size_t i) {
  std::size_t n = text.size();
  if (i + 1 >= n) return n;
  char kind = text[i + 1];
  if (kind == '[') {  // CSI: parameters, intermediates, one final byte
    std::size_t j = i + 2;
    while (j < n && static_cast<unsigned char>(text[j]) >= 0x20 &&
           static_cast<unsigned char>(text[j]) <= 0x3F)
      ++j;
    while (j < n && static_cast<unsigned char>(text[j]) >= 0x20 &&
           static_cast<unsigned char>(text[j]) <= 0x2F)
      ++j;
    if (j < n && static_cast<unsigned char>(text[j]) >= 0x40 &&
        static_cast<unsigned char>(text[j]) <= 0x7E)
      ++j;
    return j;
  }
  if (kind == ']' || kind == 'P' || kind == 'X' || kind == '^' || kind == '_') {
    // OSC, DCS, SOS, PM, APC: a string ended by BEL or ST (ESC \). An
    // unterminated one runs to the end of the line, which is where a
    // terminal would also stop showing text.
    for (std::size_t j = i + 2; j < n; ++j) {
      if (text[j] == '\x07') return j + 1;
      if (text[j] == '\x1b' && j + 1 < n && text[j + 1] == '\\') return j + 2;
    }
    return n;
  }
  return i + 2;  // two-byte escape such as ESC c or ESC =
}

// True when a byte is ESC, CR, NUL or >= 0x80. Eight bytes at a time: this
// runs on every line, and nearly every line is plain ASCII.
bool needs_cleaning(std::string_view raw) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull;
  constexpr std::uint64_t kHighs = 0x8080808080808080ull;
  auto has_zero = [](std::uint64_t v) { return ((v - kOnes) & ~v & kHighs) != 0; };
  std::size_t i = 0;
#if defined(__SSE2__)
  // Sixteen bytes at a time where SSE2 is there (every x86-64).
  const __m128i esc = _mm_set1_epi8(0x1b);
  const __m128i cr = _mm_set1_epi8('\r');
  const __m128i zero = _mm_setzero_si128();
  for (; i + 32 <= raw.size(); i += 32) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(raw.data() + i));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(raw.data() + i + 16));
    __m128i bad = _mm_or_si128(
        _mm_or_si128(_mm_or_si128(a, b),  // high bits
                     _mm_or_si128(_mm_cmpeq_epi8(a, esc), _mm_cmpeq_epi8(b, esc))),
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(a, cr), _mm_cmpeq_epi8(b, cr)),
                     _mm_or_si128(_mm_cmpeq_epi8(a, zero), _mm_cmpeq_epi8(b, zero))));
    if (_mm_movemask_epi8(bad) != 0) return true;
  }
#endif
  for (; i + 8 <= raw.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, raw.data() + i, 8);
    if ((w & kHighs) != 0 || has_zero(w) || has_zero(w ^ (kOnes * 0x1b)) ||
        has_zero(w ^ (kOnes * '\r')))
      return true;
  }
  for (; i < raw.size(); ++i) {
    unsigned char u = static_cast<unsigned char>(raw[i]);
    if (u == 0x1b || u == '\r' || u == 0 || u >= 0x80) return true;
  }
  return false;
}

// A colour code whose ESC was lost on the way into a paste: "\xEF\xBF\xBD[1;36m"
// (the ESC shown as U+FFFD, or an invalid byte in its place). Returns the
// index after "[...m" at `i`, or 0 when none is there.
std::size_t lost_colour_code_end(std::string_view text, std::size_t i) {
  if (i >= text.size() || text[i] != '[') return 0;
  std::size_t j = i + 1;
  while (j < text.size() && j < i + 16 && ((text[j] >= '0' && text[j] <= '9') || text[j] == ';')) ++j;
  return j < text.size() && text[j] == 'm' ? j + 1 : 0;
}

// Index just past a CSI's parameters, intermediates and final byte, the
// parameters starting at `j`.
std::size_t csi_end(std::string_view text, std::size_t j) {
  std::size_t n = text.size();
  while (j < n && static_cast<unsigned char>(text[j]) >= 0x30 && static_cast<unsigned char>(text[j]) <= 0x3F)
    ++j;
  while (j < n && static_cast<unsigned char>(text[j]) >= 0x20 && static_cast<unsigned char>(text[j]) <= 0x2F)
    ++j;
  if (j < n && static_cast<unsigned char>(text[j]) >= 0x40 && static_cast<unsigned char>(text[j]) <= 0x7E)
    ++j;
  return j;
}

// A terminal control written out as text at `i`: "^[[1;36m" (cat -v,
// less), "#033[0m" (rsyslog's escape of ESC), a trailing "^M" or "#015"
// (a CR), and with `lost_codes` a colour code whose ESC was dropped
// ("[1;36m"). Returns the index after it, or `i` when none is there.
std::size_t written_control_end(std::string_view text, std::size_t i, bool lost_codes) {
  std::size_t n = text.size();
  char c = text[i];
  if (c == '^' && i + 1 < n) {
    if (text[i + 1] == 'M' && i + 2 == n) return n;
    if (text[i + 1] == '[' && i + 2 < n && text[i + 2] == '[') return csi_end(text, i + 3);
    return i;
  }
  if (c == '#' && text.compare(i, 4, "#033") == 0) {
    if (i + 4 < n && text[i + 4] == '[') return csi_end(text, i + 5);
    return i;
  }
  if (c == '#' && i + 4 == n && text.compare(i, 4, "#015") == 0) return n;
  if (c == '[' && lost_codes) {
    std::size_t end = lost_colour_code_end(text, i);
    if (end > 0) return end;
  }
  return i;
}

}  // namespace

bool is_plain_text(std::string_view bytes) noexcept { return !needs_cleaning(bytes); }

void sanitize_line(std::string_view raw, std::string& out) {
  out.clear();
  // Terminal controls written out as text are ASCII: only the marks pass
  // finds them (and tells the light path to leave such lines alone).
  const bool notation = detail::find_marks(raw).notation;
  if (!notation && !needs_cleaning(raw)) {
    out.append(raw);
    return;
  }
  out.reserve(raw.size());
  // A colour code that lost its ESC is only taken as one on a line that
  // also resets the colour ("[0m", "[0;0m"): "[5m" alone may be text.
  const bool lost_codes = notation && (raw.find("[0m") != std::string_view::npos ||
                                       raw.find("[0;") != std::string_view::npos);
  std::size_t i = 0;
  while (i < raw.size()) {
    unsigned char u = static_cast<unsigned char>(raw[i]);
    if (notation) {
      if (std::size_t end = written_control_end(raw, i, lost_codes); end > i) {
        i = end;
        continue;
      }
    }
    if (u == 0x1b) {
      i = skip_escape(raw, i);
    } else if (u == '\r') {
      ++i;
    } else if (u == 0) {
      out.append(kReplacement);
      ++i;
    } else if (u < 0x80) {
      out.push_back(raw[i]);
      ++i;
    } else if (std::size_t len = valid_utf8_length(raw, i); len > 0) {
      if (len == 3 && raw.compare(i, 3, kReplacement) == 0) {
        if (std::size_t end = lost_colour_code_end(raw, i + 3); end > 0) {
          i = end;
          continue;
        }
      }
      out.append(raw.substr(i, len));
      i += len;
    } else {
      if (std::size_t end = lost_colour_code_end(raw, i + 1); end > 0) {
        i = end;
        continue;
      }
      out.append(kReplacement);
      ++i;
    }
  }
}

}  // namespace logrx

namespace logrx {
namespace {

// Code points a terminal or a code-review page acts on instead of showing:
// C1 controls (U+009B is CSI), bidi embeddings, overrides and isolates
// (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C), zero-width
// characters (U+200B-U+200D, U+2060, U+FEFF) and the line/paragraph
// separators U+2028/U+2029 that break a line where none is seen.
bool is_invisible_control(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2064) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

std::uint32_t decode(std::string_view text, std::size_t i, std::size_t len) {
  auto b = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(text[i + k])); };
  if (len == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (len == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

constexpr char kHex[] = "0123456789abcdef";

void append_hex(std::string& out, const char* prefix, std::uint32_t value, int digits) {
  out += prefix;
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xF];
}

}  // namespace

std::string escape_control_characters(std::string_view text, std::string_view keep) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    auto u = static_cast<unsigned char>(text[i]);
    if (u < 0x80) {
      if ((u < 0x20 || u == 0x7f) && keep.find(static_cast<char>(u)) == std::string_view::npos) {
        append_hex(out, "\\x", u, 2);
      } else {
        out += static_cast<char>(u);
      }
      ++i;
      continue;
    }
    std::size_t len = valid_utf8_length(text, i);
    if (len == 0) {
      // A stray byte: raw 0x9B is CSI to an 8-bit terminal.
      append_hex(out, "\\x", u, 2);
      ++i;
      continue;
    }
    std::uint32_t cp = decode(text, i, len);
    if (is_invisible_control(cp)) {
      append_hex(out, "\\u", cp, 4);
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

bool is_invisible_control_character(std::uint32_t code_point) noexcept {
  return is_invisible_control(code_point);
}

}  // namespace logrx
