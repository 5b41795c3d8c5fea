// Links against libarchive.a with the calls the .eval reader makes (src/readers/record_source.cpp;
// cmake/static_deps.cmake): the same objects of the archive, so the same private dependencies.
#include <archive.h>
#include <archive_entry.h>
int main(int argc, char** argv) {
  struct archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_zip(a);
  if (argc > 1 && archive_read_open_filename(a, argv[1], 65536) == ARCHIVE_OK) {
    struct archive_entry* entry = nullptr;
    char buffer[64];
    while (archive_read_next_header(a, &entry) == ARCHIVE_OK) {
      if (archive_entry_size_is_set(entry) && archive_entry_size(entry) < 64 && archive_entry_pathname(entry))
        archive_read_data(a, buffer, sizeof buffer);
      else
        archive_read_data_skip(a);
    }
  }
  const bool failed = archive_error_string(a) != nullptr;
  archive_read_free(a);
  return failed;
}
