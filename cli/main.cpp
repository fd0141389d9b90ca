#include "cli/app.h"

int main(int argc, char** argv) {
  return lagom::cli::run_cli(argc, argv);
}
