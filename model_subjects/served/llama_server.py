"""llama-cpp-python's OpenAI-compatible server, loaded as twinlab loads llama.cpp models.

    python -m model_subjects.served.llama_server --model FILE.gguf --host 127.0.0.1 --port P [...]

Every argument is llama-cpp-python's (`python -m llama_cpp.server --help`) except
`--use_extra_bufts false|true` (default false). Its server has no setting for llama.cpp's model
parameter `use_extra_bufts`, and with it on, llama-cpp-python 0.3.36 repacks Q4 weights into the AMX
buffer on Sapphire Rapids and later Xeons and the server dies on its first request (see
`model_subjects.backends.llamacpp`). So this entry point turns the parameter off for every model the
server loads, says so on stderr, then runs llama-cpp-python's own `main()`.
"""
from __future__ import annotations

import sys

from model_subjects.backends.llamacpp import cpu_amx_flags, extra_buffer_types_off


def split_args(argv: list[str]) -> tuple[bool, list[str]]:
    """(use_extra_bufts, the remaining arguments); `--use_extra_bufts X` or `--use_extra_bufts=X`."""
    use, rest = False, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--use_extra_bufts" or a.startswith("--use_extra_bufts="):
            value = a.partition("=")[2] if "=" in a else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 1 if "=" in a else 2
            if value.lower() not in ("true", "false", "1", "0"):
                sys.exit(f"--use_extra_bufts: write true or false, not {value!r}")
            use = value.lower() in ("true", "1")
            continue
        rest.append(a)
        i += 1
    return use, rest


def main(argv: list[str] | None = None) -> None:
    use, rest = split_args(list(sys.argv[1:] if argv is None else argv))
    sys.argv = [sys.argv[0], *rest]
    from llama_cpp.server.__main__ import main as server_main  # llama.cpp loads only when its backend runs

    print(f"twinlab llama_server: use_extra_bufts={use} (CPU AMX flags: {' '.join(cpu_amx_flags()) or 'none'})",
          file=sys.stderr, flush=True)
    if use:
        server_main()
        return
    with extra_buffer_types_off():
        server_main()


if __name__ == "__main__":
    main()
