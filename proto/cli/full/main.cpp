// corral-full: every command, with the daemon's and the node cluster's stacks linked.
#include "proto/cli/cli_main.hpp"

int main(int argc, char** argv) { return corral::cli::cli_main(argc, argv); }
