# An include path that shows every folder to the bottom floor: src/ itself, as one library
# for all folders would compile with. check_build.cmake must refuse it.
set(includes_trajcheck_util "${SRC_DIR}")
