// The score write of the HTTP API (docs/http-api.md, "Writes"): POST
// /v1/boards/{board}/members/{member}/scores applies one event through the service's update
// path, as `add` and `ingest` do, and answers the member's standing in every period it
// touched. Needs a write token (Api checks it, and its board scope, before the body).
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/api.h"
#include "api/tokens.h"
#include "service/leaderboards.h"

namespace bk::api {

inline constexpr std::size_t kMaxWriteBody = 8192;  // bytes of one write's body
inline constexpr int kMaxWriteNesting = 8;          // arrays and objects inside each other

// The write's answer: {"board", "member", "applied", "duplicate"?, "periods": [{"period",
// "period_id", "points", "rank", "previous_rank"?, "improved"?}]}. `board` is decoded and
// valid, `member` decoded. A body that is not the documented object is a 400 (413 over
// kMaxWriteBody); a refused event an HttpError whose status names the reason (409 closed
// period, 403 banned member, 422 a value, time or profile out of bounds, ...) with nothing
// applied; a backend down a 503.
// `answer` gets the write's outcome and reason (Response::outcome), also when it throws.
std::string write_score(const Request& request, const std::string& board, const std::string& member,
                        service::Leaderboards& boards, Response& answer);

inline constexpr std::size_t kMaxBatchBody = std::size_t{1024} * 1024;  // bytes of a batch
inline constexpr std::size_t kMaxBatchEvents = 1000;                    // events of a batch

// Whether `token`'s scope covers `board` (every board without a scope): nullopt, or the 403
// naming the board.
std::optional<HttpError> refuse_board(const WriteToken& token, const std::string& board);

// Whether the request's write token may write `board`: nullopt, or the 403 naming it.
using MayWrite = std::function<std::optional<HttpError>(const std::string& board)>;
// Takes a batch's cost from the rate limits once its events are read, before any is
// applied; throws the HttpError (429, 413) of a batch the limits refuse.
using PayFor = std::function<void(const std::vector<service::Update>& events)>;

// The batch write (docs/http-api.md, "Batches"): POST /v1/events[?standings=true] with
// {"events": [{"board", "member", "value", "at"?, "id"?, "name"?, "metadata"?}, ...]} (1 to
// kMaxBatchEvents events, at most kMaxBatchBody bytes) applies the events as one batch, in
// order (a member's events keep their order), and answers {"applied", "duplicate",
// "refused", "unavailable", "failed" (counts), "results": [...]}, one result per event in
// order: {"board", "member", "applied", "duplicate"?, "periods"?} with each period's points
// (and, with standings=true, the member's rank after the whole batch), or {"board", "member",
// "applied": false, "status", "reason", "error"} for an event not applied (the status its
// single write would answer). An event that is not the documented object, or whose board
// `may_write` refuses, refuses the whole batch (400 or 403 naming events[i]) with nothing
// applied. Then `pay` takes the batch's cost from the rate limits (nothing applied when it
// throws). An Idempotency-Key header keys each event without an id as "<key>:<index>".
// `answer.outcomes` gets each event's outcome and reason (metrics).
std::string write_events(const Request& request, service::Leaderboards& boards,
                         const MayWrite& may_write, const PayFor& pay, Response& answer);

// The write's answer for an applied or duplicate update (also what `add --json` prints).
std::string written_json(const std::string& board, const std::string& member,
                         const service::Written& written);

// The status of a refused write, by its reason (service::Refusal).
int refusal_status(service::Refusal refusal);

inline constexpr std::size_t kMaxIdempotencyKey = 255;  // characters of an Idempotency-Key

// A 415 unless the request says Content-Type: application/json (parameters such as charset
// allowed).
void require_json(const Request& request);

// The key an Idempotency-Key header carries: an RFC 8941 string (in quotes, backslash
// escapes) or, leniently, the bare characters; 1 to kMaxIdempotencyKey printable ASCII
// characters without spaces, else a 400. nullopt without the header.
std::optional<std::string> idempotency_key(const std::string& header);

// Binds `u` to its idempotency key: the header's key (which must equal the body's id when
// both are sent, else a 400) becomes its event id, and an update with an event id gets the
// fingerprint of its request (board, member, value, at as sent, name, metadata), so that the
// key sent again with another request is refused (service::Refusal::key_reused, a 422).
void keyed(service::Update& u, const std::optional<std::string>& key);

}  // namespace bk::api
