// http::api (http/http.hpp): the implementation linked in, or else the plugin beside the
// executable (the build tree) or in its installed place (TRAJCHECK_HTTP_PLUGIN_RELDIR, from
// the executable's folder to the plugin's).
#include <dlfcn.h>

#include <filesystem>
#include <string>

#include "http/http.hpp"

// Weak: null in the executable, which does not link the implementation.
extern "C" const trajcheck::http::Api* trajcheck_http_api() __attribute__((weak));

#ifndef TRAJCHECK_HTTP_PLUGIN_RELDIR
#define TRAJCHECK_HTTP_PLUGIN_RELDIR "../lib/trajcheck"
#endif

namespace trajcheck::http {
namespace {

constexpr const char* kPlugin = "libtrajcheck-http.so";

struct Loaded {
  const Api* api = nullptr;
  std::string error;
};

Loaded load_plugin() {
  Loaded l;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    l.error = "cannot find the executable's folder (/proc/self/exe: " + ec.message() + ")";
    return l;
  }
  const std::filesystem::path dir = exe.parent_path();
  std::string tried;
  for (const std::filesystem::path& path :
       {dir / kPlugin, (dir / TRAJCHECK_HTTP_PLUGIN_RELDIR / kPlugin).lexically_normal()}) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += "\n  " + (why != nullptr ? std::string(why) : path.string());
      continue;
    }
    using Entry = const Api* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "trajcheck_http_api"));
    if (entry == nullptr) {
      tried += "\n  " + path.string() + ": no trajcheck_http_api in it";
      dlclose(handle);
      continue;
    }
    const Api* found = entry();
    if (found == nullptr || found->version != kApiVersion || found->size != sizeof(Api)) {
      tried += "\n  " + path.string() + ": from another build of trajcheck (its HTTP interface differs)";
      dlclose(handle);
      continue;
    }
    l.api = found;  // the plugin stays loaded for the life of the process
    return l;
  }
  l.error = std::string("HTTP needs the plugin ") + kPlugin + ", which did not load:" + tried;
  return l;
}

}  // namespace

const Api* api(std::string* error) {
  if (trajcheck_http_api != nullptr) return trajcheck_http_api();
  static const Loaded loaded = load_plugin();
  if (loaded.api == nullptr && error != nullptr) *error = loaded.error;
  return loaded.api;
}

}  // namespace trajcheck::http
