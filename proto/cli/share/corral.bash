# bash completion for corral(1).
# Self-contained: it needs nothing from the bash-completion package, so it also works
# when sourced alone (scripts/check-cli-docs does that). The flag lists follow the
# commands' --help texts; scripts/check-cli-docs fails when one is missing here.

# Tiers that can run (config/toml/profile_schema.cpp kTiers); "e2b" is a known name but
# never available on this machine, so it is not offered.
_corral_tiers="landlock contained host gvisor container microvm"
# config/language.cpp
_corral_langs="argv command python javascript typescript rust c cpp"

_corral_grant_flags="--ro --rw --here --here=ro --cwd --env --net"
_corral_limit_flags="--memory --pids --cpu --timeout"

_corral_words() {  # fills COMPREPLY with the words of $1 that start with the current word
  local IFS=$' \t\n'
  COMPREPLY=($(compgen -W "$1" -- "$_corral_cur"))
}

_corral_files() {  # $1: -f (files and directories) or -d (directories)
  local IFS=$'\n'
  compopt -o filenames 2>/dev/null  # outside a real completion (a test) there is none to set
  COMPREPLY=($(compgen "$1" -- "$_corral_cur"))
}

_corral_flags_of() {  # the flags a command (or workspace verb) takes
  local run_common="--tier --config --allow-net --allow-host --connect --workspace -v --help"
  case $1 in
    run) echo "$run_common --lang --code --file --stdin --output-cap --changes --leave-running
               --nodes --node-cert --node-key --node-ca --node-key-passphrase-file --json
               --verbose $_corral_limit_flags $_corral_grant_flags" ;;
    doctor) echo "--json --ready --tier --config --help" ;;
    describe) echo "--config --help $_corral_grant_flags" ;;
    serve) echo "--socket --socket-mode --socket-group --stdio --allow-uid --allow-gid --config
                 --allow-host --idle-timeout --state-dir --node-listen --node-cert --node-key
                 --node-key-passphrase-file --node-ca --e2b-listen --e2b-dir --e2b-allow-remote
                 -v --verbose --help" ;;
    mcp) echo "$run_common --max-message --idle --tools-allow --tools-deny --tool-rule --tool-rate
               --tool-budget --resources-allow --resources-deny --prompts-allow --prompts-deny
               --mcp-default --pin --pin-file --on-pin-change --audit --audit-args --audit-max
               --print-pin --write-pin $_corral_limit_flags $_corral_grant_flags" ;;
    shell) echo "$run_common --lifetime --terminal --view --new $_corral_limit_flags $_corral_grant_flags" ;;
    # workspace verbs: each also takes the workspace command's own --connect and --json
    ws:create) echo "--connect --json --idle --lifetime --memory --pids --cpu --keep-files --from-snapshot" ;;
    # exec passes the rest to `corral run` with --workspace and --connect already given
    ws:exec) echo "--connect --json --changes --leave-running --tier --config --allow-net
                   --allow-host --lang --code --file --stdin --output-cap -v --verbose
                   $_corral_limit_flags $_corral_grant_flags" ;;
    ws:kill) echo "--connect --json -s --signal" ;;
    ws:files) echo "--connect --json --depth" ;;
    ws:changes) echo "--connect --json --since" ;;
    ws:rm | ws:end) echo "--connect --json --keep-files" ;;
    ws:*) echo "--connect --json" ;;
    e2b:add) echo "--name --dir --config" ;;
    e2b:*) echo "--dir --config" ;;
  esac
}

_corral() {
  local _corral_cur=${COMP_WORDS[COMP_CWORD]}
  local prev=
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()

  if ((COMP_CWORD == 1)); then
    _corral_words "run doctor describe serve mcp shell workspace ws e2b help --help --version"
    return 0
  fi

  local cmd=${COMP_WORDS[1]} i
  # After `--` the words are the program's: its name, then files.
  for ((i = 2; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} == -- ]]; then
      if ((i == COMP_CWORD - 1)); then
        local IFS=$'\n'
        COMPREPLY=($(compgen -c -- "$_corral_cur"))
      else
        _corral_files -f
      fi
      return 0
    fi
  done

  # bash splits `--here=ro` at '=' (COMP_WORDBREAKS): complete the value after it.
  if [[ $prev == = && ${COMP_WORDS[COMP_CWORD - 2]} == --here ]]; then
    _corral_words "ro rw"
    return 0
  fi
  if [[ $_corral_cur == = && $prev == --here ]]; then
    _corral_cur=
    _corral_words "ro rw"
    return 0
  fi

  # The value of the flag just typed.
  case $prev in
    --tier) _corral_words "$_corral_tiers"; return 0 ;;
    --lang) _corral_words "$_corral_langs"; return 0 ;;
    --net) _corral_words "none host"; return 0 ;;
    --config | --file | --stdin | --node-cert | --node-key | --node-ca | \
      --node-key-passphrase-file | --socket | --connect)
      _corral_files -f; return 0 ;;
    # grants take a file or a directory, so both are offered
    --ro | --rw) _corral_files -f; return 0 ;;
    --state-dir | --e2b-dir) _corral_files -d; return 0 ;;
    --pin-file | --audit | --write-pin) _corral_files -f; return 0 ;;
    --mcp-default) _corral_words "allow deny"; return 0 ;;
    --on-pin-change) _corral_words "refuse hide"; return 0 ;;
    --dir) [[ $cmd == e2b ]] && _corral_files -d; return 0 ;;
    --socket-group | --allow-gid) local IFS=$'\n'; COMPREPLY=($(compgen -g -- "$_corral_cur")); return 0 ;;
    -s | --signal) _corral_words "TERM KILL INT HUP QUIT USR1 USR2 STOP CONT"; return 0 ;;
    # free-form values: nothing sensible to offer
    --code | --output-cap | --allow-net | --workspace | --nodes | --memory | --pids | --cpu | \
      --timeout | --lifetime | --idle | --max-message | --terminal | --cwd | --env | \
      --socket-mode | --allow-uid | --idle-timeout | --node-listen | \
      --e2b-listen | --name | --from-snapshot | --depth | --since | --tools-allow | --tools-deny | \
      --tool-rule | --tool-rate | --tool-budget | --resources-allow | --resources-deny | \
      --prompts-allow | --prompts-deny | --pin | --audit-max)
      return 0 ;;
  esac

  case $cmd in
    run | doctor | describe | serve | mcp | shell)
      [[ $_corral_cur == -* || -z $_corral_cur ]] && _corral_words "$(_corral_flags_of "$cmd")"
      ;;
    workspace | ws)
      if ((COMP_CWORD == 2)); then
        _corral_words "create ls inspect exec ps kill terminals pause resume cp files mark
                       changes rm snapshot snapshots snapshot-rm --help"
      elif [[ $_corral_cur == -* ]]; then
        _corral_words "$(_corral_flags_of "ws:${COMP_WORDS[2]}")"
      elif [[ ${COMP_WORDS[2]} == cp ]]; then
        _corral_files -f  # the local side; the other is W:PATH
      fi
      ;;
    e2b)
      if ((COMP_CWORD == 2)); then
        _corral_words "key --help"
      elif ((COMP_CWORD == 3)) && [[ ${COMP_WORDS[2]} == key ]]; then
        _corral_words "add ls rm"
      elif [[ $_corral_cur == -* ]]; then
        _corral_words "$(_corral_flags_of "e2b:${COMP_WORDS[3]}")"
      fi
      ;;
  esac
  return 0
}

complete -F _corral corral
