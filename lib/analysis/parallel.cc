// SPDX-License-Identifier: MIT
// Analyzer::feed_all: the stateless work on a large input in memory (block
// prefilter, headers of the lines no rule can match) runs on several threads
// ahead of the analysis, which consumes it in line order.
//
// The input is cut into windows at line starts. Threads claim windows in
// order and survey each block of one (the blocks a window is cut into are
// the ones feed_blocks cuts it into, so every survey finds its block); the
// analysis takes window after window, applying the surveys where its state
// lets the light path run and ignoring them where it does not. A survey
// holds no state of the stream, so using it or not changes speed, never the
// report. At most kLookahead windows per thread are surveyed ahead of the
// analysis, which bounds memory whatever the input's size.
#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "analysis/analyzer_state.h"

namespace logrx {

using namespace detail;

namespace {

constexpr std::size_t kLookahead = 8;  // windows per thread
// Enough lines for the envelope decoder to have decided.
constexpr std::size_t kDecideBytes = 64 * 1024;

}  // namespace



ParallelGrain& detail::parallel_grain() {
  // Below parallel_from bytes, starting threads costs more than they save.
  static ParallelGrain grain;
  return grain;
}

void Analyzer::feed_all(std::string_view bytes, unsigned threads) {
  Impl& impl = *impl_;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  if (impl.finished || impl.input_failed) return;
  const ParallelGrain& grain = parallel_grain();
  if (threads < 2 || bytes.size() < grain.parallel_from) {
    feed(bytes);
    return;
  }
  // The prefilter takes tens of milliseconds to build, once per rulebook:
  // on another thread, while the first lines are fed.
  struct Joined {
    std::thread thread;
    ~Joined() {
      if (thread.joinable()) thread.join();
    }
  } builder;
  if (!impl.rules.prefilter_built.load(std::memory_order_acquire)) {
    const Rulebook::Impl& book = impl.rules;
    try {
      builder.thread = std::thread([&book] {
        try {
          book.has_prefilter();
        } catch (...) {
          // Built (or failed) again where the analysis needs it.
        }
      });
    } catch (...) {
      // No thread to be had: the prefilter is built when first needed.
    }
  }
  // The first lines tell whether the stream is compressed or in a shipper's
  // envelope (which both take the sequential path).
  if (impl.envelope.kind() == EnvelopeKind::Undecided) {
    std::size_t first = bytes.find('\n', kDecideBytes);
    first = first == std::string_view::npos ? bytes.size() : first + 1;
    feed(bytes.substr(0, first));
    bytes.remove_prefix(first);
  }
  bool compressed = impl.decoder && (impl.decoder->format() != Compression::None ||
                                     impl.decoder->bytes_in() == 0);
  if (bytes.size() < grain.parallel_from || compressed || !impl.envelope.passthrough() ||
      impl.finished || impl.input_failed) {
    feed(bytes);
    return;
  }
  // Text from the first byte: the decoder would only pass it through.
  impl.decoder.reset();
  impl.last_input = std::chrono::steady_clock::now();
  // A line begun in an earlier call ends first, and an unfinished last
  // line waits for the next: the windows between start and end at lines.
  std::size_t head = 0;
  if (impl.splitter.has_pending()) {
    std::size_t newline = bytes.find('\n');
    head = newline == std::string_view::npos ? bytes.size() : newline + 1;
    impl.feed_text(bytes.substr(0, head));
  }
  std::size_t last = bytes.rfind('\n');
  std::size_t body_end = last == std::string_view::npos || last < head ? head : last + 1;
  impl.feed_parallel(bytes.substr(head, body_end - head), threads);
  impl.feed_text(bytes.substr(body_end));
}

void Analyzer::Impl::feed_parallel(std::string_view bytes, unsigned threads) {
  const ParallelGrain& grain = parallel_grain();
  std::size_t window_size = std::max<std::size_t>(grain.window_bytes, 1);
  // Windows shrink towards the end (down to an eighth): the threads run out
  // of windows to survey together, not one thread surveying a whole last
  // window while the others wait.
  std::size_t smallest = std::max<std::size_t>(window_size / 8, 1);
  auto size_at = [&](std::size_t at) {
    std::size_t left = bytes.size() - at;
    return std::clamp<std::size_t>(left / (2 * std::max(threads, 1u)), smallest, window_size);
  };
  std::vector<std::size_t> starts{0};
  while (true) {
    std::size_t at = starts.back() + size_at(starts.back());
    if (at >= bytes.size()) break;
    // The line start at or after `at` (a window ends at a line's end).
    std::size_t newline = bytes.find('\n', at - 1);
    if (newline == std::string_view::npos || newline + 1 >= bytes.size()) break;
    starts.push_back(newline + 1);
  }
  starts.push_back(bytes.size());
  std::size_t windows = starts.size() - 1;
  auto window_bytes = [&](std::size_t i) { return bytes.substr(starts[i], starts[i + 1] - starts[i]); };

  // Kept between calls (a file comes in pieces): no memory is allocated
  // again for the surveys' lines once the ring has grown.
  std::vector<SurveyWindow>& ring = survey_ring;
  ring.resize(kLookahead * threads);
  for (SurveyWindow& window : ring) window.ready = false;
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t next_claim = 0;  // windows claimed for surveying
  std::size_t consumed = 0;    // windows the analysis has taken
  bool stop = false;
  // Surveys start once the analysis has tuned its prefilter on the stream's
  // serving traffic: every thread then starts from a copy of that scanner
  // (tuning one per thread on start-up lines would cost more than it saves).
  Rulebook::Impl::PrefilterScratch tuned;
  bool surveying = grain.survey_from_start;
  if (prefilter_scratch.scanner && prefilter_scratch.rebuilds >= Rulebook::Impl::kMaxScannerRebuilds) {
    tuned = prefilter_scratch;  // tuned in an earlier call
    surveying = true;
  }
  std::exception_ptr failure;
  std::size_t max_line = options.max_line_bytes;
  const Rulebook::Impl& book = rules;

  // What the stream has retired, as the analysis last published it: the
  // surveys skip those rules' line-by-line check (see survey_block).
  std::vector<char> published_retired = retired;
  std::uint64_t retired_version = 0;
  struct Surveyor {
    Rulebook::Impl::PrefilterScratch scratch;
    std::vector<char> retired_hint;
    std::uint64_t version = static_cast<std::uint64_t>(-1);
  };

  auto survey_window = [&](std::size_t index, Surveyor& surveyor) {
    SurveyWindow& window = ring[index % ring.size()];
    std::string_view text = window_bytes(index);
    window.bytes = text;
    window.count = 0;
    for (std::size_t start = 0; start < text.size();) {
      std::size_t end = block_end(text, start);
      if (window.count == window.surveys.size()) window.surveys.emplace_back();
      BlockSurvey& survey = window.surveys[window.count++];
      survey.clear();
      survey_block(text.substr(start, end - start), book, surveyor.scratch, max_line,
                   surveyor.retired_hint, survey);
      start = end;
    }
  };
  // Claims the next window that fits in the ring, surveys it and marks it
  // ready. False when there is none to claim (yet).
  auto claim_and_survey = [&](std::unique_lock<std::mutex>& lock, Surveyor& surveyor) {
    if (stop || !surveying || next_claim >= windows || next_claim >= consumed + ring.size())
      return false;
    std::size_t index = next_claim++;
    if (surveyor.version != retired_version) {
      surveyor.retired_hint = published_retired;
      surveyor.version = retired_version;
    }
    lock.unlock();
    try {
      // `tuned` is set before surveying starts and never changes after.
      if (!surveyor.scratch.scanner && tuned.scanner) surveyor.scratch = tuned;
      survey_window(index, surveyor);
    } catch (...) {
      lock.lock();
      if (!failure) failure = std::current_exception();
      stop = true;
      changed.notify_all();
      return true;
    }
    lock.lock();
    ring[index % ring.size()].ready = true;
    changed.notify_all();
    return true;
  };

  std::vector<std::thread> workers;
  workers.reserve(threads);
  auto stop_workers = [&] {
    {
      std::lock_guard<std::mutex> guard(mutex);
      stop = true;
    }
    changed.notify_all();
    for (std::thread& worker : workers) worker.join();
    workers.clear();
  };
  try {
    for (unsigned t = 1; t < threads; ++t) {
      workers.emplace_back([&] {
        Surveyor surveyor;
        std::unique_lock<std::mutex> lock(mutex);
        while (!stop) {
          if (!claim_and_survey(lock, surveyor)) changed.wait(lock);
        }
      });
    }
  } catch (...) {
    // No more threads to be had: the ones started (or this one alone) do the work.
  }

  Surveyor own;
  std::size_t index = 0;

  try {
    for (; index < windows; ++index) {
      bool with_surveys = false;
      {
        std::lock_guard<std::mutex> guard(mutex);
        with_surveys = surveying;
      }
      if (!with_surveys) {
        feed_blocks(window_bytes(index), nullptr, 0);
        bool tuned_now = prefilter_scratch.scanner &&
                         prefilter_scratch.rebuilds >= Rulebook::Impl::kMaxScannerRebuilds;
        {
          std::lock_guard<std::mutex> guard(mutex);
          ++consumed;
          if (retired != published_retired) {
            published_retired = retired;
            ++retired_version;
          }
          if (tuned_now) {
            tuned = prefilter_scratch;
            next_claim = index + 1;
            surveying = true;
          }
        }
        if (tuned_now) changed.notify_all();
        if (!envelope.passthrough()) {
          ++index;
          break;
        }
        continue;
      }
      SurveyWindow& window = ring[index % ring.size()];
      {
        std::unique_lock<std::mutex> lock(mutex);
        // Survey windows here too while the one needed is not ready.
        while (!window.ready && !failure) {
          if (claim_and_survey(lock, own)) continue;
          changed.wait(lock);
        }
        if (failure) break;
      }
      feed_blocks(window.bytes, window.surveys.data(), window.count);
      {
        std::lock_guard<std::mutex> guard(mutex);
        window.ready = false;
        ++consumed;
        if (retired != published_retired) {
          published_retired = retired;
          ++retired_version;
        }
      }
      changed.notify_all();
      // A stream in an envelope never takes the light path: no more surveys.
      if (!envelope.passthrough()) {
        ++index;
        break;
      }
    }
  } catch (...) {
    stop_workers();
    throw;
  }
  stop_workers();
  if (failure) std::rethrow_exception(failure);
  // What was not taken window by window (an envelope turned up) is fed as it is.
  if (index < windows) feed_text(bytes.substr(starts[index]));
}

}  // namespace logrx
