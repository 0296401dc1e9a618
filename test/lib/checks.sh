# Checks shared by the shell tests of the `kestrel` command (sourced; they count into $fails and
# write into $tmp, which the sourcing script sets).
# expect CODE NAME CMD... : runs CMD, checks its exit code; output in $tmp/out, $tmp/err.
expect() {
  local code=$1 name=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -ne "$code" ]; then
    echo "FAIL: $name: exit $got, expected $code"; sed 's/^/  stderr: /' "$tmp/err"; fails=$((fails+1))
  else
    echo "ok: $name"
  fi
}
contains() {  # contains NAME FILE TEXT
  if ! grep -qF -- "$3" "$2"; then
    echo "FAIL: $1: '$3' not in output"; sed 's/^/  | /' "$2"; fails=$((fails+1))
  fi
}
