// Which Redis error replies are transient (the server cannot serve now: retry, with backoff,
// on a new connection) and which are lasting for what they touched (a key of the wrong type,
// a script's runtime error): every error code Redis 7.0 sends that the classification names,
// as the server words them, alone and as a script's redis.call raises them.
#include <gtest/gtest.h>

#include <string>

#include "redis/error.h"

namespace bk::redis {
namespace {

// Redis 7.0's own wording (server.c shared.* objects, cluster.c, script.c).
const char* const kTransient[] = {
    "LOADING Redis is loading the dataset in memory",
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
    "TRYAGAIN Multiple keys request during rehashing of slot",
    "CLUSTERDOWN The cluster is down",
    "CLUSTERDOWN Hash slot not served",
    "READONLY You can't write against a read only replica.",
    "OOM command not allowed when used memory > 'maxmemory'.",
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
    "disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the "
    "RDB error.",
    "NOREPLICAS Not enough good replicas to write.",
    // Redirections reach a caller only when the connection could not follow them.
    "MOVED 3999 127.0.0.1:6381",
    "ASK 3999 127.0.0.1:6381",
    // Raised inside a script by redis.call: Redis 7.0 keeps the code, adds where.
    "OOM command not allowed when used memory > 'maxmemory'. script: "
    "0a9f75e991483d02789696e4c90d26c10395863e, on @user_script:1.",
    "READONLY You can't write against a read only replica. script: "
    "0a9f75e991483d02789696e4c90d26c10395863e, on @user_script:12.",
};

const char* const kLasting[] = {
    "WRONGTYPE Operation against a key holding the wrong kind of value",
    "WRONGTYPE Operation against a key holding the wrong kind of value script: "
    "1b73f6ce9bf8cd334aae9d185451bf5768d875d1, on @user_script:45.",
    "ERR user_script:1: attempt to perform arithmetic on a nil value script: "
    "cd204846b476dfdb7c087f1a1cef2df50cc9a6e7, on @user_script:1.",
    "ERR Error running script (call to f_0123): @user_script:1: boom",
    "ERR unknown command 'FROB', with args beginning with: ",
    "NOSCRIPT No matching script. Please use EVAL.",
    "NOGROUP No such key 'lb:events' or consumer group 'boardkeeper' in XREADGROUP with GROUP "
    "option",
    "BUSYGROUP Consumer Group name already exists",  // not BUSY: another code
    "BUSYKEY Target key name already exists.",
    "NOPERM this user has no permissions to run the 'eval' command",
    "NOAUTH Authentication required.",
    "WRONGPASS invalid username-password pair or user is disabled.",
    "EXECABORT Transaction discarded because of previous errors.",
    "CROSSSLOT Keys in request don't hash to the same slot",
    "UNKILLABLE Sorry the script already executed write commands against the dataset.",
    "NOTBUSY No scripts in execution right now.",
    "LOADINGX not a code Redis sends",  // a prefix of a word is not the word
    "OOMKILLER neither",
    "",
};

TEST(RedisErrors, TransientRepliesAreConnectionErrors) {
  for (const char* reply : kTransient) {
    EXPECT_EQ(classify_reply_error(reply), ErrorClass::transient) << reply;
    EXPECT_THROW(throw_reply_error(reply), ConnectionError) << reply;
  }
}

TEST(RedisErrors, LastingRepliesAreReplyErrors) {
  for (const char* reply : kLasting) {
    EXPECT_EQ(classify_reply_error(reply), ErrorClass::lasting) << reply;
    EXPECT_THROW(throw_reply_error(reply), ReplyError) << reply;
    try {
      throw_reply_error(reply);
    } catch (const ConnectionError&) {
      ADD_FAILURE() << "transient: " << reply;
    } catch (const ReplyError&) {
    }
  }
}

}  // namespace
}  // namespace bk::redis
