# Long steps speak: sourced by setup.sh and local_model.sh, so that nothing they run is silent for
# more than SPEAK_S seconds (default 10).
#
#   some_command 2>&1 | speak "installing X" [REGEX]
#
# copies each line of its input that matches REGEX (every line if none is given) to stderr as it
# comes, and after each SPEAK_S seconds in which no line was shown, says on stderr what is still
# going on and for how long: "setup.sh: still installing X (1m10s so far)". SPEAK_NOTE adds a word
# to that line (where the whole output goes, for one).

SPEAK_AS=${SPEAK_AS:-$(basename "$0")}

elapsed() {  # seconds -> 1m05s
  printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
}

speak() {
  local label=$1 pattern=${2:-} every=${SPEAK_S:-10} start=$SECONDS shown=$SECONDS line="" part status
  while :; do
    part=""
    if IFS= read -r -t "$every" part; then
      line+=$part
      if [ -z "$pattern" ] || [[ $line =~ $pattern ]]; then
        printf '%s\n' "$line" >&2
        shown=$SECONDS
      fi
      line=""
    else
      status=$?
      if [ "$status" -le 128 ]; then  # the end of the input
        line+=$part
        if [ -n "$line" ] && { [ -z "$pattern" ] || [[ $line =~ $pattern ]]; }; then
          printf '%s\n' "$line" >&2
        fi
        return 0
      fi
      line+=$part  # a line not ended when the time ran out: kept until it is
    fi
    if [ $((SECONDS - shown)) -ge "$every" ]; then  # lines that are not shown do not count
      printf '%s: still %s (%s so far%s)\n' "$SPEAK_AS" "$label" "$(elapsed $((SECONDS - start)))" \
        "${SPEAK_NOTE:+; $SPEAK_NOTE}" >&2
      shown=$SECONDS
    fi
  done
}
