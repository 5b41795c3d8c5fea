// `trajcheck fmt RULES…`: print, rewrite (--write) or verify (--check) the canonical layout.
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck::cli {
namespace {

struct FmtArgs {
  std::vector<std::string> files;
  bool write = false;
  bool check = false;
  std::string color = "auto";
};

bool write_file(const std::string& path, const std::string& text, std::string* error) {
  // Write beside the file and rename, so an interrupted run never leaves half a file.
  std::string tmp = path + ".trajcheck-fmt.tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) {
      *error = fmt::format("cannot write {}", tmp);
      return false;
    }
    f << text;
    if (!f.flush()) {
      *error = fmt::format("cannot write {}", tmp);
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    *error = fmt::format("cannot replace {}", path);
    return false;
  }
  return true;
}

int run_fmt(const FmtArgs& a) {
  if (a.write && a.check) {
    fmt::print(stderr, "trajcheck fmt: --write and --check exclude each other\n");
    return kBadInput;
  }
  const bool color = use_color(a.color, stderr);
  bool bad = false, unformatted = false;
  for (const std::string& path : a.files) {
    std::string error;
    std::optional<Source> src = Source::from_file(path, &error);
    if (!src) {
      fmt::print(stderr, "trajcheck fmt: {}\n", error);
      bad = true;
      continue;
    }
    std::vector<Diagnostic> diags;
    std::string text = format_rules(*src, diags);
    if (has_errors(diags) || (text.empty() && !src->text().empty())) {
      fmt::print(stderr, "{}", format_diagnostics(*src, diags, color));
      bad = true;
      continue;
    }
    const bool same = text == src->text();
    if (a.check) {
      if (!same) {
        fmt::print("{}\n", path);
        unformatted = true;
      }
    } else if (a.write) {
      if (!same) {
        if (!write_file(path, text, &error)) {
          fmt::print(stderr, "trajcheck fmt: {}\n", error);
          bad = true;
          continue;
        }
        fmt::print(stderr, "formatted {}\n", path);
      }
    } else {
      if (a.files.size() > 1) fmt::print("# ==> {} <==\n", path);
      fmt::print("{}", text);
    }
  }
  if (bad) return kBadInput;
  if (unformatted) {
    std::fflush(stdout);
    fmt::print(stderr, "trajcheck fmt: the files above are not in canonical form (run trajcheck fmt --write)\n");
    return kFail;
  }
  return kPass;
}

const bool fmt_registered = register_command({"fmt", 50, [](CLI::App& app) {
  auto args = std::make_shared<FmtArgs>();
  CLI::App* sub = app.add_subcommand("fmt", "print (or --write) the canonical form of rules files");
  sub->add_option("rules", args->files, "rules files")->required();
  sub->add_flag("-w,--write", args->write, "rewrite files that are not in canonical form");
  sub->add_flag("--check", args->check, "list files not in canonical form; exit 1 if any");
  sub->add_option("--color", args->color, "auto|always|never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  return [args] { return run_fmt(*args); };
}});

}  // namespace
}  // namespace trajcheck::cli
