#!/usr/bin/env bash
# ref-find.sh: runs the seed's find_agent_pane (testdata/reference/wcref.sh) once and prints the
# pane id it returns, for `make bench`.
#
# Environment:
#   REF_FIND_AGENT   the agent name to look for. It is passed in the environment, not as an
#                    argument, so this script's own command line never holds the name (the seed
#                    runs the function in the orchestrator's shell, where no process shows it).
#   TMUX_PANE        a pane of the session to search: outside any pane, tmux takes the client's
#                    TMUX_PANE to pick the session of `list-panes -s`, as in the orchestrator's pane.
#   REF_TMUX_SOCKET  the server's socket.
set -u
# shellcheck source=../reference/wcref.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/../reference/wcref.sh"
find_agent_pane "${REF_FIND_AGENT:?set REF_FIND_AGENT to the agent name}"
