// SPDX-License-Identifier: MIT
// Reading a message's own hints: names it mentions and comparisons it states.
#include <catch2/catch.hpp>

#include "analysis/hints.h"

using logrx::detail::find_comparisons;
using logrx::detail::find_mentions;
using logrx::detail::flag_spelling;

TEST_CASE("Flag spellings map to the server's --kebab-case form", "[analysis][hints]") {
  CHECK(flag_spelling("max_model_len") == "--max-model-len");
  CHECK(flag_spelling("--max-model-len") == "--max-model-len");
  CHECK(flag_spelling("max-model-len") == "--max-model-len");
  CHECK(flag_spelling("self.server_args.mem_fraction_static") == "--mem-fraction-static");
}

TEST_CASE("Mentions: config keys, flags and variables with their values", "[analysis][hints]") {
  auto m = find_mentions("Try increasing `gpu_memory_utilization` or set VLLM_USE_V1=0 and --enforce-eager");
  REQUIRE(m.size() == 3);
  CHECK(m[0].name == "gpu_memory_utilization");
  CHECK_FALSE(m[0].env);
  CHECK(m[1].name == "VLLM_USE_V1");
  CHECK(m[1].env);
  CHECK(m[1].value == std::optional<std::string>("0"));
  CHECK(m[2].name == "--enforce-eager");
  CHECK(find_mentions("The model failed to load on this GPU").empty());
  // Module paths and file names are not flags.
  CHECK(find_mentions("ImportError: cannot import name 'build_regex_from_object' from "
                      "'outlines.fsm.json_schema' (model.safetensors_index)")
            .size() == 1);  // build_regex_from_object only
}

TEST_CASE("Comparisons: stated violations and requirements", "[analysis][hints]") {
  auto greater = find_comparisons(
      "User-specified max_model_len (131072) is greater than the derived max_model_len (32768).");
  REQUIRE(greater.size() == 1);
  CHECK(greater[0].subject == "max_model_len");
  CHECK(greater[0].subject_value == std::optional<double>(131072));
  CHECK(greater[0].op == "<=");
  CHECK(greater[0].stated_violation);
  CHECK(greater[0].bound_value == std::optional<double>(32768));

  auto tgi = find_comparisons("`max_input_tokens`(4096) must be < `max_total_tokens`(2048)");
  REQUIRE(tgi.size() == 1);
  CHECK(tgi[0].subject == "max_input_tokens");
  CHECK(tgi[0].op == "<");
  CHECK(tgi[0].bound == "max_total_tokens");
  CHECK(tgi[0].bound_value == std::optional<double>(2048));

  auto longest = find_comparisons("max_num_seqs (300) must be less than or equal to max_cudagraph_capture_size (256).");
  REQUIRE(longest.size() == 1);
  CHECK(longest[0].op == "<=");  // the longest phrase wins over "must be less than"
  CHECK(longest[0].bound == "max_cudagraph_capture_size");

  auto divisible = find_comparisons("Total number of attention heads (40) must be divisible by tensor parallel size (3).");
  REQUIRE(divisible.size() == 1);
  CHECK(divisible[0].op == "divisible");
  CHECK(divisible[0].subject_value == std::optional<double>(40));
  CHECK(divisible[0].bound_value == std::optional<double>(3));

  CHECK(find_comparisons("Loading weights took 12.5 seconds").empty());
}
