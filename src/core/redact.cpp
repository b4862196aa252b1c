// The process-wide list of secrets and the replacement of them in any text.
#include "core/redact.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <set>
#include <vector>

#include "core/percent.h"

namespace bk {
namespace {

// Pieces of a password shorter than this are not registered on their own: hiding every "ab"
// in every message would make them unreadable, and two characters reveal next to nothing.
// A whole password is always registered, whatever its length.
constexpr std::size_t kMinPiece = 3;

// Where URL and libpq parsers may cut a password that was not percent-encoded.
constexpr std::string_view kCutAt = "/?#@:&=,[] \t";

// Longest first, so that a secret holding another is replaced whole.
struct LongestFirst {
  bool operator()(const std::string& a, const std::string& b) const {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  }
};

struct Registry {
  std::mutex mutex;
  std::set<std::string, LongestFirst> secrets;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  return out;
}

// How a JSON string shows `s` (only " and \ differ for printable text): a secret echoed in
// a JSON line escaped is hidden too.
std::string json_escaped(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// `password` as written and decoded; when `whole`, at any length, else from kMinPiece.
void add_password(std::string_view password, bool whole) {
  const auto add = [&](std::string_view s) {
    if (s.size() >= (whole ? 1 : kMinPiece)) add_secret(s);
  };
  add(password);
  if (const auto decoded = percent_decode(password)) add(*decoded);
}

// A user info's password and the pieces a parser may cut it into (from kMinPiece).
void add_password_and_pieces(std::string_view password, bool whole) {
  add_password(password, whole);
  for (std::size_t start = 0; start < password.size();) {
    const std::size_t end = std::min(password.find_first_of(kCutAt, start), password.size());
    const std::string_view piece = password.substr(start, end - start);
    if (piece.size() < password.size()) add_password(piece, false);
    start = end + 1;
  }
}

// Where the user info may start, and the scheme (lower case; empty when there is none).
std::pair<std::size_t, std::string> authority_start(std::string_view text) {
  for (const std::string_view separator : {"://", ":/"}) {
    const std::size_t at = text.find(separator);
    if (at != std::string_view::npos) {
      return {at + separator.size(), lower(text.substr(0, at))};
    }
  }
  return {0, ""};
}

bool names_a_user_first(const std::string& scheme) {
  return scheme == "postgresql" || scheme == "postgres";
}

void add_userinfo_secrets(std::string_view text) {
  const auto [begin, scheme] = authority_start(text);
  const std::size_t last = text.rfind('@');
  if (last == std::string_view::npos || last < begin) return;
  for (std::size_t at = text.find('@', begin); at != std::string_view::npos;
       at = text.find('@', at + 1)) {
    const std::string_view userinfo = text.substr(begin, at - begin);
    const std::size_t colon = userinfo.find(':');
    if (colon != std::string_view::npos) {
      add_password_and_pieces(userinfo.substr(colon + 1), at == last);
    } else if (!names_a_user_first(scheme)) {
      add_password_and_pieces(userinfo, at == last);
    }
  }
}

// Start and length of the value of each `password=` (also sslpassword=...) in `text`.
template <class F>
void for_each_password_value(std::string_view text, F&& f) {
  const std::string low = lower(text);
  constexpr std::string_view kWord = "password";
  for (std::size_t from = low.find(kWord); from != std::string::npos;
       from = low.find(kWord, from + 1)) {
    std::size_t i = from + kWord.size();
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size() || text[i] != '=') continue;
    ++i;
    while (i < text.size() && text[i] == ' ') ++i;
    f(i);
  }
}

// Each way the value may be read is registered: quoted (key='a \' b'), up to a space (key=value
// form) and up to '&' or '#' (a URL's query).
void add_parameter_secrets(std::string_view text) {
  for_each_password_value(text, [&](std::size_t i) {
    if (i < text.size() && text[i] == '\'') {
      std::string unescaped;
      std::size_t end = i + 1;
      for (; end < text.size() && text[end] != '\''; ++end) {
        if (text[end] == '\\' && end + 1 < text.size()) ++end;
        unescaped += text[end];
      }
      add_password(text.substr(i + 1, std::min(end, text.size()) - i - 1), true);
      add_password(unescaped, true);
    }
    for (const std::string_view ends : {" \t\r\n", "&#"}) {
      const std::size_t end = std::min(text.find_first_of(ends, i), text.size());
      add_password(text.substr(i, end - i), true);
    }
  });
}

// Replaces the value of every `password=` parameter (URL query or libpq keywords).
void redact_password_parameters(std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> values;  // start, end
  for_each_password_value(s, [&](std::size_t i) {
    std::size_t end = i;
    if (end < s.size() && s[end] == '\'') {
      ++end;
      while (end < s.size() && s[end] != '\'') end += s[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, s.size());
    } else {
      while (end < s.size() && s[end] != '&' && s[end] != '#' &&
             std::isspace(static_cast<unsigned char>(s[end])) == 0) {
        ++end;
      }
    }
    if (end > i) values.emplace_back(i, end);
  });
  for (auto it = values.rbegin(); it != values.rend(); ++it) {
    s.replace(it->first, it->second - it->first, kRedacted);
  }
}

}  // namespace

void add_secret(std::string_view secret) {
  if (secret.empty()) return;
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.secrets.emplace(secret);
  const std::string escaped = json_escaped(secret);
  if (escaped != secret) r.secrets.insert(escaped);
}

void add_url_secrets(std::string_view text) {
  add_userinfo_secrets(text);
  add_parameter_secrets(text);
}

std::string redact(std::string text) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  for (const std::string& secret : r.secrets) {
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kRedacted.size())) {
      text.replace(at, secret.size(), kRedacted);
    }
  }
  return text;
}

std::string redact_url(std::string_view url) {
  std::string out(url);
  const auto [begin, scheme] = authority_start(out);
  const std::size_t at = out.rfind('@');
  if (at != std::string::npos && at >= begin) {
    const std::size_t colon = out.find(':', begin);
    if (colon < at) {
      out.replace(colon + 1, at - colon - 1, kRedacted);
    } else if (!names_a_user_first(scheme) && at > begin) {
      out.replace(begin, at - begin, kRedacted);  // redis://secret@host: a bare password
    }
  }
  redact_password_parameters(out);
  return redact(std::move(out));
}

}  // namespace bk
