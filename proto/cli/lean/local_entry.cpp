// The entry of corral-local.so: the lean program's in-process commands, opened by
// proto/cli/front/ when a command needs the actor runtime. The only exported symbol (the
// module's version script): its own references are bound when it is linked, not loaded.
#include "proto/cli/cli_main.hpp"

extern "C" __attribute__((visibility("default"))) int corral_local_main(int argc, char** argv) {
  return corral::cli::cli_main(argc, argv);
}
