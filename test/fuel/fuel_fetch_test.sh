#!/usr/bin/env bash
# Fuel models end to end (src/fuel): `kestrel fetch` downloads a model from a Fuel server (a local
# one, test/fuel/fuel_server.py, on 127.0.0.1 of the test's network namespace, never the internet)
# into the Fuel cache; `kestrel run` of a world including the model's URL then loads it from the
# cache with the server gone (the model's own mesh through model://NAME), and a model not in the
# cache is an error naming the URL, the caches searched and the `kestrel fetch` command.
# Usage: test/fuel/fuel_fetch_test.sh KESTREL_BINARY SOURCE_DIR
set -uo pipefail
kestrel=$1
src=$2
fails=0
tmp=$(mktemp -d)
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
# shellcheck source=../lib/checks.sh
source "$src/test/lib/checks.sh"  # expect, contains

# No user cache, no resource path: only what the test puts there is found.
export HOME="$tmp/home" IGN_FUEL_CACHE_PATH="$tmp/cache"
unset GZ_FUEL_CACHE_PATH KESTREL_RESOURCE_PATH GZ_SIM_RESOURCE_PATH IGN_GAZEBO_RESOURCE_PATH \
  SDF_PATH
mkdir -p "$HOME"

python3 "$src/test/fuel/fuel_server.py" "$src/test/fuel/models" "$tmp/port" "$tmp/requests" &
server_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || { echo "FAIL: the test Fuel server did not start"; exit 1; }
url="http://127.0.0.1:$(cat "$tmp/port")/1.0/kestrel/models/test_box"

cat >"$tmp/w.sdf" <<SDF
<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <model name="ground">
      <static>true</static>
      <link name="l"><collision name="c"><geometry><plane><normal>0 0 1</normal>
        <size>10 10</size></plane></geometry></collision></link>
    </model>
    <include><uri>$url</uri><name>box</name><pose>0 0 0.5 0 0 0</pose></include>
  </world>
</sdf>
SDF

# Not in the cache: an error naming the URL, each cache searched and the command to fetch it.
expect 1 "check before fetch" "$kestrel" check "$tmp/w.sdf"
contains "missing model names its URL" "$tmp/out" "cannot resolve <include> '$url'"
contains "missing model names IGN_FUEL_CACHE_PATH" "$tmp/out" "$tmp/cache"
contains "missing model names ~/.gz/fuel" "$tmp/out" "$HOME/.gz/fuel"
contains "missing model names ~/.ignition/fuel" "$tmp/out" "$HOME/.ignition/fuel"
contains "missing model says how to fetch" "$tmp/out" "kestrel fetch '$url'"
expect 1 "run before fetch" "$kestrel" run "$tmp/w.sdf" --iterations 10 --no-transport
contains "run names the fetch command" "$tmp/err" "kestrel fetch '$url'"
# A model that includes it: the same error, at the <include>.
mkdir -p "$tmp/wrapper"
printf '<?xml version="1.0"?>\n<sdf version="1.9"><model name="wrapper"><include><uri>%s</uri></include></model></sdf>\n' \
  "$url" >"$tmp/wrapper/model.sdf"
expect 1 "model including a missing Fuel model" "$kestrel" check "$tmp/wrapper/model.sdf"
contains "that model's error says how to fetch" "$tmp/out" "kestrel fetch '$url'"
# A model file that is only an <include> of a Fuel model (PX4's atmos): libsdformat loses the
# whole file over it (exit 2); the error is still the cache's, with the fetch command.
printf '<?xml version="1.0"?>\n<sdf version="1.9"><include><uri>%s</uri></include></sdf>\n' \
  "$url" >"$tmp/alias.sdf"
expect 2 "a file that only includes a missing Fuel model" "$kestrel" check "$tmp/alias.sdf"
contains "its error says how to fetch" "$tmp/err" "kestrel fetch '$url'"
[ ! -e "$tmp/requests" ] || { echo "FAIL: a run or check contacted the server"; fails=$((fails+1)); }

expect 1 "fetch of a model the server lacks" "$kestrel" fetch "${url%test_box}no_such_model"
contains "failed fetch names the request" "$tmp/err" "/1.0/kestrel/models/no_such_model/tip/no_such_model.zip"
expect 0 "fetch" "$kestrel" fetch "$url"
contains "fetch says where" "$tmp/out" "$tmp/cache/"
contains "fuel-tools requested the zip" "$tmp/requests" \
  "GET /1.0/kestrel/models/test_box/tip/test_box.zip"
dir=$(sed -n 's/.* -> //p' "$tmp/out")
[ -f "$dir/model.sdf" ] && [ -f "$dir/meshes/cube.obj" ] ||
  { echo "FAIL: the cache folder '$dir' lacks the model's files"; fails=$((fails+1)); }
[ "$(basename "$dir")" = 2 ] ||
  { echo "FAIL: cached as version '$(basename "$dir")', the server said 2"; fails=$((fails+1)); }

# The server is gone: the run reads the cache only. The 0.2 m box dropped from 0.5 m rests on
# the ground at z = 0.1 (its mesh collides).
kill "$server_pid"; wait "$server_pid" 2>/dev/null; server_pid=
expect 0 "check after fetch" "$kestrel" check "$tmp/w.sdf"
expect 0 "run after fetch" "$kestrel" run "$tmp/w.sdf" --duration 2 --rtf 0 --no-transport \
  --truth-csv "$tmp/t.csv"
z=$(awk -F, '$2 == "box" { z = $5 } END { print z }' "$tmp/t.csv")
awk -v z="$z" 'BEGIN { exit !(z > 0.095 && z < 0.105) }' ||
  { echo "FAIL: the fetched box rests at z = '$z', expected 0.1 +- 0.005"; fails=$((fails+1)); }
echo "box at rest: z = $z"

expect 0 "model including the fetched Fuel model" "$kestrel" check "$tmp/wrapper/model.sdf"

# model://test_box (as Gazebo worlds name a Fuel model they expect in the cache) resolves too.
sed "s|$url|model://test_box|" "$tmp/w.sdf" >"$tmp/w2.sdf"
expect 0 "model:// of a cached Fuel model" "$kestrel" check "$tmp/w2.sdf"

[ "$fails" -eq 0 ] && echo "all fuel checks passed" || echo "$fails fuel checks failed"
[ "$fails" -eq 0 ]
