#!/usr/bin/env bash
# check_settings_read_once.sh SOURCE_DIR: settings are looked up by their keys in one file
# (docs/architecture.md, "Settings"): outside driver/settings/run_settings.cpp no C++ source of driver/,
# apps/ or bindings/ reads a setting by its key (Config::integer, real, text, boolean, is_auto, origin
# with a key written out), and outside driver/settings/ none sets one (Config::set): the rest of the
# program takes the typed RunSettings. Exit 1 naming every such line.
set -euo pipefail
cd "${1:?usage: check_settings_read_once.sh SOURCE_DIR}"
keys='"(task|data\.|model\.|training\.|analysis\.|output\.|profiling\.|mpi\.)'
bad=0
while IFS= read -r hit; do
  echo "$hit: reads a setting by its key (take it from RunSettings, driver/settings/run_settings.hpp)"
  bad=1
done < <(grep -rnE "\.(integer|real|text|boolean|is_auto|origin)\($keys" driver apps bindings \
  --include='*.cpp' --include='*.hpp' --include='*.h' | grep -v '^driver/settings/run_settings\.cpp:' || true)
while IFS= read -r hit; do
  echo "$hit: sets a setting (a run's choices go to RunSettings::choose)"
  bad=1
done < <(grep -rnE "\.set\($keys" driver apps bindings --include='*.cpp' --include='*.hpp' --include='*.h' |
  grep -v '^driver/settings/' || true)
[ "$bad" -eq 0 ] || exit 1
echo "ok: settings are read by key only in driver/settings/run_settings.cpp and set only in driver/settings/"
