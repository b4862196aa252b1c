// serve: the HTTP API's process (src/http/serve.h) with the command line's options.
#include "http/serve.h"
#include "cli/commands.h"

namespace bk::cli {

int serve(Context& ctx, const ServeArgs& args) {
  return http::serve(ctx.config(), ctx.clock(), {args.listen, args.workers});
}

}  // namespace bk::cli
