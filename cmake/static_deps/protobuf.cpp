// Links against libprotobuf.a as src/run/otlp_protobuf.cpp does: a generated message parsed,
// written as JSON, the log handler set (cmake/static_deps.cmake).
#include <string>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/json_util.h>
int main(int argc, char**) {
  google::protobuf::SetLogHandler(nullptr);
  google::protobuf::Struct message;
  (*message.mutable_fields())["a"].set_string_value("b");
  std::string bytes, json;
  message.SerializeToString(&bytes);
  google::protobuf::Struct parsed;
  return !parsed.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
         !google::protobuf::util::MessageToJsonString(parsed, &json).ok() || argc > 1;
}
