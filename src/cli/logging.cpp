// spdlog set-up; the JSON form escapes the message so any text stays one valid object. Every
// line, in either form, goes through the one redaction of secrets (core/redact.h).
#include "cli/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/output.h"
#include "core/redact.h"

namespace bk::cli {
namespace {

Format g_format = Format::text;
// Extra JSON fields of the message being logged on this thread (log_info_with_fields).
thread_local std::string t_fields;

class JsonMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm& /*tm*/,
              spdlog::memory_buf_t& dest) override {
    const std::string s = json_string(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(s.data(), s.data() + s.size());
    if (!t_fields.empty()) {
      const std::string fields = redact(t_fields);
      dest.push_back(',');
      dest.append(fields.data(), fields.data() + fields.size());
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessage>();
  }
};

// Hands each message to `inner` with every registered secret replaced, before it is formatted:
// the text and JSON forms alike, whatever the message came from (our code, a library's error).
class RedactingSink final : public spdlog::sinks::sink {
 public:
  explicit RedactingSink(std::shared_ptr<spdlog::sinks::sink> inner) : inner_(std::move(inner)) {}

  void log(const spdlog::details::log_msg& msg) override {
    const std::string text = redact(std::string(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg redacted = msg;
    redacted.payload = spdlog::string_view_t(text.data(), text.size());
    inner_->log(redacted);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

}  // namespace

void setup_logging(std::string_view level, Format format) {
  const auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") {
    throw UsageError("unknown log level '" + std::string(level) +
                     "'; use trace, debug, info, warn, error, critical or off");
  }
  auto logger = std::make_shared<spdlog::logger>(
      "boardkeeper",
      std::make_shared<RedactingSink>(std::make_shared<spdlog::sinks::stderr_sink_mt>()));
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  if (format == Format::json) {
    formatter->add_flag<JsonMessage>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","msg":%*})");
  } else {
    formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v");
  }
  logger->set_formatter(std::move(formatter));
  logger->set_level(lvl);
  spdlog::set_default_logger(std::move(logger));
  g_format = format;
}

Format log_format() {
  return g_format;
}

void log_info_with_fields(const std::string& message, const std::string& fields) {
  t_fields = fields;
  spdlog::info("{}", message);
  t_fields.clear();
}

}  // namespace bk::cli
