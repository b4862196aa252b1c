// A members body read event by event: a depth count refuses deep nesting before it grows,
// and the elements of the ids array are checked as they arrive.
#include "api/ids_body.h"

#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/validate.h"

namespace bk::api {
namespace {

using json = nlohmann::json;

constexpr std::string_view kShape = R"(the body must be {"ids": ["member", ...]})";

// What nlohmann says is wrong, without the "last read" text it quotes from the body (up to
// the whole body for a long string): "invalid literal", "unexpected end of input", ...
std::string parse_problem(std::size_t position, std::string_view what) {
  const std::size_t dash = what.find(" - ");
  std::string_view reason = dash == std::string_view::npos ? "syntax error" : what.substr(dash + 3);
  reason = reason.substr(0, reason.find("; last read: "));
  return "the body is not JSON: at byte " + std::to_string(position) + ", " + std::string(reason);
}

// The handler nlohmann::json::sax_parse calls; each call returns false to stop the parse.
class IdsReader {
 public:
  explicit IdsReader(std::size_t max_ids) : max_ids_(max_ids) {}

  bool null() { return value("null"); }
  bool boolean(bool /*b*/) { return value("a boolean"); }
  bool number_integer(json::number_integer_t /*n*/) { return value("a number"); }
  bool number_unsigned(json::number_unsigned_t /*n*/) { return value("a number"); }
  bool number_float(json::number_float_t /*n*/, const json::string_t& /*text*/) {
    return value("a number");
  }
  bool binary(json::binary_t& /*b*/) { return value("binary data"); }
  bool string(json::string_t& s) {
    if (!value("a string")) return false;
    return in_ids() ? add_id(std::move(s)) : true;
  }
  bool start_object(std::size_t /*elements*/) { return open("an object"); }
  bool start_array(std::size_t /*elements*/) { return open("an array"); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    if (depth_ != 1 || k != "ids") return true;
    if (seen_ids_) return fail("ids is given twice");
    seen_ids_ = ids_next_ = true;
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) {
    return fail(parse_problem(position, e.what()));
  }

  IdsBody finish() && {
    if (!out_.problem && !seen_ids_) out_.problem = std::string(kShape);
    if (!out_.problem && given_ > max_ids_) {
      out_.problem =
          "at most " + std::to_string(max_ids_) + " ids a request, not " + std::to_string(given_);
    }
    return std::move(out_);
  }

 private:
  std::size_t max_ids_;
  int depth_ = 0;          // objects and arrays open around the next event
  int ids_depth_ = 0;      // inside the ids array: its depth (its elements are at it); else 0
  bool ids_next_ = false;  // the next value is that of the top-level key "ids"
  bool seen_ids_ = false;
  std::size_t given_ = 0;  // ids in the array, also those beyond max_ids
  IdsBody out_;

  bool in_ids() const { return ids_depth_ != 0 && depth_ == ids_depth_; }
  bool fail(std::string problem) {
    out_.problem = std::move(problem);
    return false;
  }
  // Every value, before it is read: its place decides what it may be.
  bool value(std::string_view type) {
    if (depth_ == 0 && type != "an object") return fail(std::string(kShape));
    if (ids_next_ && type != "an array") {
      return fail("ids must be an array of member ids, not " + std::string(type));
    }
    if (in_ids() && type != "a string") {
      return fail("every id must be a string, not " + std::string(type));
    }
    return true;
  }
  bool open(std::string_view type) {
    if (!value(type)) return false;
    if (++depth_ > kMaxJsonDepth) {
      return fail("the body is nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    if (ids_next_) ids_depth_ = depth_;
    ids_next_ = false;
    return true;
  }
  bool close() {
    if (depth_ == ids_depth_) ids_depth_ = 0;
    --depth_;
    return true;
  }
  bool add_id(std::string id) {
    if (++given_ > max_ids_) return true;  // only counted, for the message
    if (auto problem = member_problem(id)) {
      // A too long id is not shown (its length is in the problem).
      return fail(id.size() > kMaxMemberBytes ? *problem
                                              : "member id " + json_string(id) + ": " + *problem);
    }
    out_.ids.push_back(std::move(id));
    return true;
  }
};

}  // namespace

IdsBody ids_from_body(std::string_view body, std::size_t max_ids) {
  IdsReader reader(max_ids);
  try {
    json::sax_parse(body.begin(), body.end(), &reader);
  } catch (const json::exception& e) {
    // sax_parse reports through parse_error; this is for anything it throws instead.
    IdsBody refused;
    refused.problem = parse_problem(0, e.what());
    return refused;
  }
  return std::move(reader).finish();
}

}  // namespace bk::api
