// The one redaction of secrets. Every password boardkeeper is given (in the Redis and
// PostgreSQL URLs of the config or the environment, in --pushgateway) is registered as soon
// as it is read; every message, log line and metric text goes through redact() before it is
// shown, so a password that some library echoes (libpq quoting a host it could not resolve,
// a parser quoting what it refused) is hidden too.
#pragma once
#include <string>
#include <string_view>

namespace bk {

// What a secret is replaced with.
inline constexpr std::string_view kRedacted = "***";

// From now on redact() hides `secret` (nothing happens for an empty one). Thread-safe.
void add_secret(std::string_view secret);

// Registers everything in `text` (a URL, a libpq key=value string, or something that was meant
// to be one) that could be a password, as written and percent-decoded:
// - the user info's password: between the scheme's "://" (or ":/", or the start) and the
//   LAST '@', after its first ':' (for any scheme but postgres[ql], a user info without ':'
//   is a bare password, as in redis://secret@host);
// - the same for every other '@', and the pieces of each password between the characters a
//   parser may split it at (/ ? # @ : & = , [ ] and spaces), when 3 characters or longer: so
//   that a parser that reads a raw '/' or '@' in a password differently cannot show a part
//   of it either;
// - the value of every `password=` parameter (URL query or key=value form, quoted or not).
void add_url_secrets(std::string_view text);

// `text` with every registered secret replaced by "***" (longest secrets first).
std::string redact(std::string text);

// `url` for showing: the password of its user info and every `password=` value replaced by
// "***", then redact()ed.
std::string redact_url(std::string_view url);

}  // namespace bk
