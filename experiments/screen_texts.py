"""Every text a participant sees, for every human runner (PsychoPy window, browser), from the spec.

One table of built-in texts per language (English, complete Italian and Simplified Chinese sets), chosen by the
spec's `language` (a BCP 47 tag; `it-CH` uses `it`). A spec overrides any of them under `texts:`
(screen texts) or `feedback:` (the feedback words); the spec validator fills the ones it leaves out
from the language's set, so `exp.texts.*` and `exp.feedback.*_text` always hold what is shown.

`screen_texts(exp)` gives the flat, JSON-serialisable mapping a runner draws from;
`screen_bundle(exp)` adds the instruction pages, block intros and the quit prompt's keys, for a
runner that needs everything at once (the browser page).

Placeholders are `{name}` and only the names listed per key in `TEXT_KEYS` are replaced (so a
literal brace elsewhere in a text is left alone). `{key}`, `{yes}` and `{no}` are filled by
`screen_texts` with the spec's keys, named in the spec's language; the others ({trial}, {total},
{next}, {sessions}, {measured}, {expected}, {code}) are filled at run time with `fill`.

Adding a text: one entry in `TEXT_KEYS`, one in every language of `DEFAULTS` (a test checks that
each language is complete), a field in `experiments.spec.Texts` (or `Feedback`), and docs/spec.md. A task
kind's own texts are its folder's (`TEXTS` in its `__init__`, read with `kind_text`, below).
"""
from __future__ import annotations

import re
from typing import Any

from experiments.kinds import kind_module

# The spec's schema (experiments.spec_model) imports this module for its defaults, so the functions
# below take the validated spec as `Experiment`, a name for "any object with the spec's fields" only.
Experiment = Any

# screen text key -> the placeholders it may contain. The keys are fields of `texts:` in the spec,
# except FEEDBACK_KEYS, which are fields of `feedback:`.
TEXT_KEYS: dict[str, frozenset[str]] = {
    # pages of both runners
    "break_text": frozenset({"key"}),  # the pause after a block with break_after
    "end_text": frozenset({"key"}),  # the last screen of a completed session
    "next_session_text": frozenset({"next", "sessions"}),  # under end_text when another session follows
    "resume_text": frozenset({"trial", "total"}),  # instead of the instructions, on --resume / reload
    "aborted_text": frozenset(),  # the last screen of a session ended with the quit key
    "continue_hint": frozenset({"key"}),  # under instruction and resume pages
    "block_start_hint": frozenset({"key"}),  # under a block's intro_text
    "quit_prompt": frozenset(),  # the quit key's confirmation page
    "quit_hint": frozenset({"yes", "no"}),  # under it: which key quits, which goes back
    # the browser runner's own screens
    "start_button": frozenset(),
    "continue_button": frozenset(),
    "tap_continue_hint": frozenset(),  # under pages on a touch screen
    "fullscreen_text": frozenset(),
    "loading_text": frozenset(),
    "refresh_refused_text": frozenset({"measured", "expected"}),
    "completion_code_text": frozenset({"code"}),
    "redirect_text": frozenset(),
    "already_done_text": frozenset(),
    "save_error_text": frozenset(),  # shown while a trial waits to be saved (the page keeps trying)
    "save_refused_text": frozenset(),  # the server refused a trial for good: what to do instead
    "link_error_text": frozenset(),  # a link without a usable participant id or session, or a refused start
    # feedback (spec section `feedback:`)
    "correct_text": frozenset(),
    "incorrect_text": frozenset(),
    "no_response_text": frozenset(),  # panel mode: no answer within timing.response_ms
}
FEEDBACK_KEYS = ("correct_text", "incorrect_text", "no_response_text")
SPEC_TEXT_KEYS = tuple(k for k in TEXT_KEYS if k not in FEEDBACK_KEYS)  # the fields of `texts:` besides instructions

DEFAULTS: dict[str, dict[str, str]] = {
    "en": {
        # break_text and end_text are the spec defaults of the first release, word for word: a spec
        # that leaves them out keeps its hash
        "break_text": "Take a short break. Press {key} to continue.",
        "end_text": "Thank you! The session is over.",
        "next_session_text": "Your next session: session {next} of {sessions}.",
        "resume_text": "Welcome back. The session continues with sentence {trial} of {total}.",
        "aborted_text": "The session has ended. Thank you.",
        "continue_hint": "Press {key} to continue",
        "block_start_hint": "Press {key} to start",
        "quit_prompt": "Quit the session?",
        "quit_hint": "{yes} = quit (everything so far is saved)      {no} = continue",
        "start_button": "Start",
        "continue_button": "Continue",
        "tap_continue_hint": "Tap the screen to continue",
        "fullscreen_text": "The experiment runs in full screen. Press the button to start.",
        "loading_text": "Loading…",
        "refresh_refused_text": ("Your screen refreshes at {measured} Hz, but this study needs {expected} Hz. "
                                 "Please take part on another device."),
        "completion_code_text": "Your completion code is {code}.",
        "redirect_text": "You will now be taken back to the study site.",
        "already_done_text": "This session is already complete. Thank you!",
        "link_error_text": "This link cannot start the study. Please contact the researcher.",
        "save_error_text": ("Your answers could not be saved. Please check your internet connection; "
                            "the experiment will try again."),
        "save_refused_text": ("Your answers cannot be saved from this page. Please contact the researcher and "
                              "send them the message below."),
        "correct_text": "Correct!",
        "incorrect_text": "Wrong!",
        "no_response_text": "Too slow!",
    },
    "it": {
        "break_text": "Fai una breve pausa. Premi {key} per continuare.",
        "end_text": "Grazie! La sessione è finita.",
        "next_session_text": "La prossima sessione: sessione {next} di {sessions}.",
        "resume_text": "Bentornato/a. La sessione riprende dalla frase {trial} di {total}.",
        "aborted_text": "La sessione è terminata. Grazie.",
        "continue_hint": "Premi {key} per continuare",
        "block_start_hint": "Premi {key} per iniziare",
        "quit_prompt": "Vuoi interrompere la sessione?",
        "quit_hint": "{yes} = esci (quanto fatto finora è salvato)      {no} = continua",
        "start_button": "Inizia",
        "continue_button": "Continua",
        "tap_continue_hint": "Tocca lo schermo per continuare",
        "fullscreen_text": "L'esperimento si svolge a schermo intero. Premi il pulsante per iniziare.",
        "loading_text": "Caricamento…",
        "refresh_refused_text": ("Il tuo schermo si aggiorna a {measured} Hz, ma questo studio richiede {expected} Hz. "
                                 "Partecipa da un altro dispositivo."),
        "completion_code_text": "Il tuo codice di completamento è {code}.",
        "redirect_text": "Ora verrai riportato/a al sito dello studio.",
        "already_done_text": "Questa sessione è già stata completata. Grazie!",
        "link_error_text": "Questo link non può avviare lo studio. Contatta chi conduce la ricerca.",
        "save_error_text": ("Non è stato possibile salvare le tue risposte. Controlla la connessione a internet; "
                            "l'esperimento riproverà."),
        "save_refused_text": ("Le tue risposte non possono essere salvate da questa pagina. Contatta chi conduce "
                              "la ricerca e invia il messaggio qui sotto."),
        "correct_text": "Corretto!",
        "incorrect_text": "Sbagliato!",
        "no_response_text": "Troppo lento!",
    },
    # Simplified Chinese (zh, zh-CN; used by the Hu & Levy Mandarin study); the break text names the key, as it
    "zh": {
        "break_text": "请稍作休息。按{key}键继续。",
        "end_text": "谢谢！本次实验结束。",
        "next_session_text": "您的下一次实验：共{sessions}次中的第{next}次。",
        "resume_text": "欢迎回来。实验将从第{trial}句（共{total}句）继续。",
        "aborted_text": "实验已结束。谢谢。",
        "continue_hint": "按{key}键继续",
        "block_start_hint": "按{key}键开始",
        "quit_prompt": "要退出本次实验吗？",
        "quit_hint": "{yes} = 退出（已完成的部分都已保存）      {no} = 继续",
        "start_button": "开始",
        "continue_button": "继续",
        "tap_continue_hint": "轻触屏幕继续",
        "fullscreen_text": "实验将以全屏方式进行。请按下按钮开始。",
        "loading_text": "加载中…",
        "refresh_refused_text": "您的屏幕刷新率为{measured} Hz，但本实验需要{expected} Hz。请换一台设备参加。",
        "completion_code_text": "您的完成码是{code}。",
        "redirect_text": "现在将带您返回研究网站。",
        "already_done_text": "本次实验已经完成。谢谢！",
        "link_error_text": "此链接无法开始实验。请联系研究人员。",
        "save_error_text": "您的回答未能保存。请检查网络连接；实验会自动重试。",
        "save_refused_text": "此页面无法保存您的回答。请联系研究人员，并将下面的信息发给他们。",
        "correct_text": "正确！",
        "incorrect_text": "错误！",
        "no_response_text": "太慢了！",
    },
}

# how keys are named on screen; a key not listed is shown upper-cased ('f' -> 'F')
KEY_NAMES: dict[str, dict[str, str]] = {
    "en": {"space": "SPACE", "escape": "ESC", "return": "ENTER", "enter": "ENTER", "backspace": "BACKSPACE",
           "tab": "TAB", "left": "LEFT ARROW", "right": "RIGHT ARROW", "up": "UP ARROW", "down": "DOWN ARROW",
           "lshift": "LEFT SHIFT", "rshift": "RIGHT SHIFT"},
    "it": {"space": "SPAZIO", "escape": "ESC", "return": "INVIO", "enter": "INVIO", "backspace": "BACKSPACE",
           "tab": "TAB", "left": "FRECCIA SINISTRA", "right": "FRECCIA DESTRA", "up": "FRECCIA SU",
           "down": "FRECCIA GIÙ", "lshift": "MAIUSC SINISTRO", "rshift": "MAIUSC DESTRO"},
    "zh": {"space": "空格", "escape": "ESC", "return": "回车", "enter": "回车", "backspace": "退格",
           "tab": "TAB", "left": "左方向", "right": "右方向", "up": "上方向", "down": "下方向",
           "lshift": "左SHIFT", "rshift": "右SHIFT"},
}

# the quit prompt's keys (PsychoPy key names): yes = end the session, no = go back
CONFIRM_KEYS: dict[str, tuple[str, str]] = {"en": ("y", "n"), "it": ("s", "n"), "zh": ("y", "n")}

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def base_language(language: str) -> str:
    """The built-in set a BCP 47 tag uses: itself, its primary subtag ('it-CH' -> 'it'), else 'en'."""
    if language in DEFAULTS:
        return language
    primary = language.split("-", 1)[0].lower()
    return primary if primary in DEFAULTS else "en"


def has_builtin_texts(language: str) -> bool:
    """Whether `language` (or its primary subtag) has a built-in set."""
    return language in DEFAULTS or language.split("-", 1)[0].lower() in DEFAULTS


def default_text(language: str, key: str) -> str:
    return DEFAULTS[base_language(language)][key]


def placeholder_problem(key: str, text: str) -> str | None:
    """Why `text` cannot be the `key` text (an unknown {placeholder}), or None."""
    allowed = TEXT_KEYS[key]
    bad = sorted({m for m in _PLACEHOLDER.findall(text) if m not in allowed})
    if not bad:
        return None
    known = ", ".join("{" + a + "}" for a in sorted(allowed)) or "none"
    return f"unknown placeholder(s) {', '.join('{' + b + '}' for b in bad)}; this text may use: {known}"


def fill(text: str, **values: Any) -> str:
    """Replace the `{name}` placeholders named in `values`; any other brace text stays as written."""
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), text)


# a block's intro_text may say how many trials the block has: `{trials}` is filled with the number this
# participant (or model subject) gets in this session, so a run limited with --trials says the real number
INTRO_PLACEHOLDERS = frozenset({"trials"})


def block_sizes(trials: Any) -> dict[str, int]:
    """Trials per block in the trials a session runs (a compiled sequence, cut to --trials)."""
    sizes: dict[str, int] = {}
    for t in trials:
        sizes[t.block] = sizes.get(t.block, 0) + 1
    return sizes


def block_intro(text: str, n_trials: int | None) -> str:
    """A block's intro_text as shown: `{trials}` filled in (left as written when the number is not known)."""
    return fill(text, trials=n_trials) if n_trials is not None else text


def page_hint(text: str, hint: str, key_name: str) -> str:
    """The hint under a text page, or none when the page itself already says which key to press (the
    bundled specs' last page, "Press SPACE to begin.", stood above "Press SPACE to continue"): one
    instruction per screen. `key_name` is the key as named on screen (`key_label`)."""
    if key_name and re.search(rf"(?<![\w]){re.escape(key_name)}(?![\w])", text):
        return ""
    return hint


def key_label(key: str, language: str = "en") -> str:
    """How a key is named on screen in `language` ('space' -> 'SPACE' / 'SPAZIO', 'f' -> 'F')."""
    return KEY_NAMES[base_language(language)].get(key, key.upper())


def confirm_keys(language: str) -> tuple[str, str]:
    """The quit prompt's (yes, no) keys in `language` (en: y/n, it: s/n)."""
    return CONFIRM_KEYS[base_language(language)]


def untranslated(exp: "Experiment") -> list[str]:
    """Keys shown in English because the spec's language has no built-in set and the spec gives no text.

    Empty for English and Italian specs. A runner warns with it (the texts are still valid)."""
    if has_builtin_texts(exp.language):
        return []
    english = DEFAULTS["en"]
    return [k for k in TEXT_KEYS if _spec_value(exp, k) == english[k]]


def _spec_value(exp: "Experiment", key: str) -> str:
    value = getattr(exp.feedback if key in FEEDBACK_KEYS else exp.texts, key)
    assert value is not None, "the spec validator fills every screen text"
    return value


def screen_texts(exp: "Experiment") -> dict[str, str]:
    """Every single-line/paragraph text of a session as shown, by key (JSON-serialisable).

    {key}, {yes} and {no} are filled in with the spec's continue key and the quit prompt's keys in
    the spec's language; run-time placeholders ({trial}, {total}, ...) are left for `fill`. Also
    holds `response_prompt`, the key names (`continue_key_label`, `quit_yes_label`, ...) and, for a
    panel spec, `panel_question`, `panel_label_<answer>` and `panel_key_<answer>`.
    """
    lang = exp.language
    yes, no = confirm_keys(lang)
    named = {"key": key_label(exp.task.response_key, lang), "yes": key_label(yes, lang), "no": key_label(no, lang)}
    out = {k: fill(_spec_value(exp, k), **{n: v for n, v in named.items() if n in TEXT_KEYS[k]}) for k in TEXT_KEYS}
    out["response_prompt"] = exp.task.response_prompt
    out["continue_key_label"] = named["key"]
    out["quit_yes_label"], out["quit_no_label"] = named["yes"], named["no"]
    panel = exp.task.panel if exp.task.response == "panel" else None
    if panel is not None:
        out["panel_question"] = panel.question
        for answer in ("violation", "no_violation"):
            out[f"panel_label_{answer}"] = panel.labels[answer]  # type: ignore[index]
            out[f"panel_key_{answer}"] = key_label(panel.keys[answer], lang)  # type: ignore[index]
    return out


def screen_bundle(exp: "Experiment") -> dict[str, Any]:
    """All a runner shows, as one JSON-serialisable mapping (the browser page embeds it).

    `texts` (from `screen_texts`), `instructions` (pages), `block_intros` (block name -> text or
    null), `keys` (PsychoPy key names: continue, quit, quit_yes, quit_no, and panel answers),
    `language`, and `untranslated` (keys left in English, see `untranslated`).
    """
    yes, no = confirm_keys(exp.language)
    keys = {"continue": exp.task.response_key, "quit": exp.task.quit_key, "quit_yes": yes, "quit_no": no}
    if exp.task.response == "panel" and exp.task.panel is not None:
        keys.update({f"panel_{a}": k for a, k in exp.task.panel.keys.items()})
    return {
        "language": exp.language,
        "texts": screen_texts(exp),
        "instructions": [" ".join(page.split()) for page in exp.texts.instructions],
        "block_intros": {b.name: b.intro_text for b in exp.blocks},
        "keys": keys,
        "untranslated": untranslated(exp),
    }


# A task kind's own built-in texts (a hint naming its key, its answers' labels) are the kind's: its light
# `__init__` declares `TEXTS` (language -> name -> text, English complete), found through the kinds registry.
# The spec's task section overrides each one (`hint`, `labels`); participants/tasks/settings.py reads them.


def kind_text(kind: str, language: str, name: str, **values: Any) -> str:
    """The kind's text `name` in `language` (the tag, its primary subtag, else English), `{placeholders}` named
    in `values` filled. A name the kind's English set lacks is a defect of the kind: LookupError names it."""

    texts: dict[str, dict[str, str]] = getattr(kind_module(kind), "TEXTS", None) or {}
    english = texts.get("en", {})
    if name not in english:
        raise LookupError(f"task kind {kind!r} declares no English text {name!r} (its TEXTS)")
    table = texts.get(language) or texts.get(language.split("-", 1)[0].lower()) or english
    return fill(table.get(name, english[name]), **values)


def kind_text_problems(kind: str) -> list[str]:
    """What is wrong with a kind's declared `TEXTS`: not a mapping of language -> name -> text, no English set,
    a language with a name English lacks (a test runs it over every registered kind)."""

    texts = getattr(kind_module(kind), "TEXTS", None)
    if texts is None:
        return []
    if not isinstance(texts, dict) or not all(isinstance(t, dict) and all(isinstance(k, str) and isinstance(v, str)
                                                                           for k, v in t.items())
                                              for t in texts.values()):
        return [f"{kind}: TEXTS is not a mapping of language -> name -> text"]
    if "en" not in texts:
        return [f"{kind}: TEXTS has no English set ('en')"]
    return [f"{kind}: TEXTS[{lang!r}] has {name!r}, which English lacks" for lang, t in texts.items()
            for name in t if name not in texts["en"]]
