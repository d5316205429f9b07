. .venv/bin/activate
for spec in "$@"; do
  out=runs/vleaf/ev/$(echo "$spec" | md5sum | cut -c1-8)
  rm -rf $out
  r=$(sergeant-major eval --agents "$spec" trained --deals ${DEALS:-100} --workers 1 --seed ${SEED:-11} --no-progress --out $out 2>&1 | grep -A4 "row minus column\|ms  (" | tr -s ' ' | tr '\n' ' ')
  echo "$spec :: $r"
done
