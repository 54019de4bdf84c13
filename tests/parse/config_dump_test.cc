// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "parse/config_dump.h"

using logrx::detail::ConfigEntry;
using logrx::detail::ConfigValue;
using logrx::detail::parse_config_dump;

namespace {

std::vector<ConfigEntry> parse_ok(const std::string& text) {
  std::vector<ConfigEntry> out;
  std::string error;
  INFO(error);
  REQUIRE(parse_config_dump(text, out, error));
  return out;
}

const ConfigValue& get(const std::vector<ConfigEntry>& entries, const std::string& key) {
  for (const auto& e : entries)
    if (e.key == key) return e.value;
  FAIL("no key " << key);
  static ConfigValue none;
  return none;
}

}  // namespace

TEST_CASE("SGLang ServerArgs repr: strings, numbers, None, booleans, nested values",
          "[parse][config]") {
  auto entries = parse_ok(
      "ServerArgs(model_path='Qwen/Qwen3.6-27B', tokenizer_mode='auto', mem_fraction_static=0.8, "
      "max_running_requests=None, tp_size=1, disable_radix_cache=False, "
      "json_model_override_args='{\"rope\": 1}', lora_paths=['a', 'b'], "
      "cuda_graph_bs=(1, 2, 4), sampling_defaults={'temperature': 0.6}, "
      "api_key='it\\'s', load_format=<LoadFormat.AUTO: 'auto'>, "
      "speculative_algorithm='EAGLE', decrypted_config_file=None, random_seed=731412551, "
      "scale=-1.5e-3, hicache_storage_backend_extra_config=HiCacheConfig(a=1, b=[2, {'c': None}]))");
  CHECK(get(entries, "model_path").kind == ConfigValue::Kind::String);
  CHECK(get(entries, "model_path").text == "Qwen/Qwen3.6-27B");
  CHECK(get(entries, "mem_fraction_static").kind == ConfigValue::Kind::Number);
  CHECK(get(entries, "mem_fraction_static").number == 0.8);
  CHECK(get(entries, "max_running_requests").kind == ConfigValue::Kind::None);
  CHECK(get(entries, "disable_radix_cache").kind == ConfigValue::Kind::Bool);
  CHECK_FALSE(get(entries, "disable_radix_cache").boolean);
  CHECK(get(entries, "json_model_override_args").text == "{\"rope\": 1}");
  CHECK(get(entries, "lora_paths").kind == ConfigValue::Kind::Raw);
  CHECK(get(entries, "lora_paths").text == "['a', 'b']");
  CHECK(get(entries, "cuda_graph_bs").text == "(1, 2, 4)");
  CHECK(get(entries, "api_key").text == "it's");
  CHECK(get(entries, "load_format").text == "<LoadFormat.AUTO: 'auto'>");
  CHECK(get(entries, "scale").number == -1.5e-3);
  CHECK(get(entries, "hicache_storage_backend_extra_config").kind == ConfigValue::Kind::Raw);
  CHECK(entries.size() == 17);
}

TEST_CASE("The newer SGLang dict dump and vLLM non-default args", "[parse][config]") {
  auto entries = parse_ok(
      "{'model_path': 'meta-llama/Llama-3.1-8B', 'mem_fraction_static': 0.871, "
      "'disable_radix_cache': True, 'speculative_algorithm': None,}");
  CHECK(get(entries, "mem_fraction_static").number == 0.871);
  CHECK(get(entries, "disable_radix_cache").boolean);
  auto vllm = parse_ok(
      "{'model_tag': 'Qwen/Qwen3-8B', 'host': '0.0.0.0', 'model': 'Qwen/Qwen3-8B', "
      "'max_model_len': 32768, 'gpu_memory_utilization': 0.9}");
  CHECK(get(vllm, "max_model_len").number == 32768);
  CHECK(get(vllm, "gpu_memory_utilization").number == 0.9);
}

TEST_CASE("The vLLM engine config line with bare values", "[parse][config]") {
  auto entries = parse_ok(
      "model='Qwen/Qwen3-8B', speculative_config=None, tokenizer='Qwen/Qwen3-8B', "
      "skip_tokenizer_init=False, dtype=torch.bfloat16, max_seq_len=32768, "
      "download_dir=None, load_format=auto, tensor_parallel_size=1, "
      "served_model_name=Qwen/Qwen3-8B, enable_prefix_caching=True, "
      "decoding_config=DecodingConfig(backend='auto', disable_fallback=False), "
      "compilation_config={\"level\":3,\"cudagraph_capture_sizes\":[512,504]}");
  CHECK(get(entries, "dtype").text == "torch.bfloat16");
  CHECK(get(entries, "max_seq_len").number == 32768);
  CHECK(get(entries, "load_format").text == "auto");
  CHECK(get(entries, "served_model_name").text == "Qwen/Qwen3-8B");
  CHECK(get(entries, "enable_prefix_caching").boolean);
  CHECK(get(entries, "compilation_config").kind == ConfigValue::Kind::Raw);
}

TEST_CASE("Malformed and hostile dumps are refused with a reason", "[parse][config]") {
  std::vector<ConfigEntry> out;
  std::string error;
  CHECK_FALSE(parse_config_dump("ServerArgs(model_path='unterminated, tp_size=1)", out, error));
  CHECK(error.find("offset") != std::string::npos);
  CHECK_FALSE(parse_config_dump("{'a': 1, 'b': [1, 2}", out, error));
  CHECK_FALSE(parse_config_dump("", out, error));
  std::string deep = "{'a': " + std::string(10000, '[') + std::string(10000, ']') + "}";
  CHECK_FALSE(parse_config_dump(deep, out, error));
  CHECK(error.find("nested") != std::string::npos);
  CHECK(out.empty());
}

TEST_CASE("Regression: text the grammar reads as a value cannot hide nesting from the depth limit",
          "[parse][config][hostile]") {
  // A pre-scan once guarded depth and read the `'` in `<'>` as a string
  // start (and skipped brackets inside `<...>`), while the grammar reads both
  // as enum-repr text: the brackets after them were recursed into unguarded.
  std::vector<ConfigEntry> out;
  std::string error;
  const std::string deep(65000, '[');
  for (const std::string& text :
       {"ServerArgs(a=<'>, b=" + deep + ")", "ServerArgs(a=<" + std::string(100, ']') + ">, b=" + deep + ")",
        "{'a': <'>, 'b': " + deep + "}", "model='x', a=<'>, b=" + deep,
        "model='x', a=<\">, b=" + std::string(5000, '{') + std::string(5000, '(')}) {
    INFO(text.substr(0, 40));
    CHECK_FALSE(parse_config_dump(text, out, error));
    CHECK(error.find("nested deeper than 64") != std::string::npos);
    CHECK(out.empty());
  }
  // Nesting up to the limit still parses, and the enum repr keeps its text.
  std::string ok = "ServerArgs(a=<'>, b=" + std::string(60, '[') + std::string(60, ']') + ")";
  REQUIRE(parse_config_dump(ok, out, error));
  REQUIRE(out.size() == 2);
  CHECK(out[0].value.text == "<'>");
}
