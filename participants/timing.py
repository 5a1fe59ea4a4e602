"""Refresh measurement and the timing policy: count frames on a synced display, watch the clock otherwise.

Why a policy and not just frames: under Xvfb (and on some laptops, VMs or remote desktops)
`win.flip()` does not wait for a vertical blank, so "15 frames" can be a few milliseconds. The
runner therefore measures the flip intervals at start, decides whether they are locked to a
stable refresh, and either times by frames at the measured rate or by the clock (with a clear
warning recorded in the sidecar). On a lab monitor a rate that disagrees with the expected one
(`timing.expected_refresh_hz`) refuses to start unless overridden.

`decide_timing` is a pure function so the policy can be tested with numbers, without a display.
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Sequence

# A flip faster than this is not a monitor refresh unless the lab says it expects such a rate.
MAX_PLAUSIBLE_HZ = 250.0
MIN_PLAUSIBLE_HZ = 20.0
# Flip intervals on a synced display are regular; a larger coefficient of variation means no vsync
# (a few dropped frames in the measurement give a CV of a few percent, not this).
MAX_INTERVAL_CV = 0.15


@dataclass
class RefreshMeasurement:
    """What the display did during the start-up measurement."""

    psychopy_rate_hz: float | None  # win.getActualFrameRate(); None when PsychoPy found no stable rate
    intervals_ms: list[float]  # consecutive flip intervals recorded after warm-up

    @property
    def median_interval_ms(self) -> float | None:
        return statistics.median(self.intervals_ms) if self.intervals_ms else None

    @property
    def interval_rate_hz(self) -> float | None:
        m = self.median_interval_ms
        return 1000.0 / m if m else None

    @property
    def interval_cv(self) -> float | None:
        if len(self.intervals_ms) < 3:
            return None
        mean = statistics.fmean(self.intervals_ms)
        return statistics.pstdev(self.intervals_ms) / mean if mean > 0 else None

    def summary(self) -> dict[str, Any]:
        iv = self.intervals_ms
        return {
            "psychopy_rate_hz": _round(self.psychopy_rate_hz),
            "interval_rate_hz": _round(self.interval_rate_hz),
            "n_intervals": len(iv),
            "interval_ms_mean": _round(statistics.fmean(iv)) if iv else None,
            "interval_ms_median": _round(self.median_interval_ms),
            "interval_ms_min": _round(min(iv)) if iv else None,
            "interval_ms_max": _round(max(iv)) if iv else None,
            "interval_cv": _round(self.interval_cv, 4),
        }


@dataclass
class TimingPolicy:
    """How stimuli will be timed in this session, and why."""

    mode: Literal["frames", "clock"]
    vsync: bool
    refresh_hz: float | None  # the rate frames are counted at (frames mode)
    frame_ms: float | None
    expected_refresh_hz: float | None
    refuse: str | None = None  # a reason to refuse to start (None: go ahead)
    overridden: bool = False  # a refusal was overridden with --allow-refresh-mismatch
    warnings: list[str] = field(default_factory=list)

    def frames(self, ms: float) -> int:
        """Whole frames for a duration (at least one); only meaningful in frames mode."""
        assert self.frame_ms, "frames() needs a measured frame period"
        return max(1, round(ms / self.frame_ms))

    def planned_ms(self, ms: float) -> float:
        """The duration that will actually be shown: a whole number of frames, or the clock value."""
        if self.mode == "frames":
            return self.frames(ms) * self.frame_ms
        return float(ms)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["refresh_hz"] = _round(self.refresh_hz)
        d["frame_ms"] = _round(self.frame_ms, 4)
        return d


def _round(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(float(x), nd)


def vsync_verdict(m: RefreshMeasurement, expected_hz: float | None, tolerance_hz: float) -> tuple[bool, str]:
    """Are flips locked to a stable display refresh? Returns (verdict, reason in words)."""
    rate = m.psychopy_rate_hz
    cv = m.interval_cv
    if rate is None:
        return False, "PsychoPy found no stable frame rate (flip intervals vary)"
    if cv is not None and cv > MAX_INTERVAL_CV:
        return False, f"flip intervals are irregular (coefficient of variation {cv:.2f} > {MAX_INTERVAL_CV})"
    irate = m.interval_rate_hz
    if irate is not None and abs(irate - rate) > 0.1 * rate:
        return False, (f"PsychoPy's estimate ({rate:.1f} Hz) and the median flip interval ({irate:.1f} Hz) "
                       "disagree: flips are not locked to a refresh")
    if rate < MIN_PLAUSIBLE_HZ:
        return False, f"measured {rate:.1f} Hz is below any monitor's refresh rate"
    if rate > MAX_PLAUSIBLE_HZ:
        if expected_hz is not None and abs(rate - expected_hz) <= tolerance_hz:
            return True, f"measured {rate:.1f} Hz matches the expected high refresh rate {expected_hz:g} Hz"
        return False, (
            f"measured {rate:.1f} Hz (flips every {1000.0 / rate:.2f} ms) is faster than a monitor refresh: "
            "flips are not waiting for the vertical blank"
        )
    return True, f"flips are regular at {rate:.2f} Hz"


def decide_timing(
    m: RefreshMeasurement,
    *,
    expected_hz: float | None,
    tolerance_hz: float,
    allow_mismatch: bool = False,
) -> TimingPolicy:
    """The session's timing policy from a refresh measurement (pure; see the module docstring)."""
    vsync, why = vsync_verdict(m, expected_hz, tolerance_hz)
    warnings: list[str] = []
    refuse: str | None = None
    if vsync:
        rate = float(m.psychopy_rate_hz)  # type: ignore[arg-type]
        policy = TimingPolicy("frames", True, rate, 1000.0 / rate, expected_hz)
        if expected_hz is not None and abs(rate - expected_hz) > tolerance_hz:
            refuse = (
                f"the display refreshes at {rate:.2f} Hz but {expected_hz:g} Hz "
                f"(±{tolerance_hz:g}) is expected; fix the display settings or pass "
                "--allow-refresh-mismatch to time by frames at the measured rate"
            )
    else:
        policy = TimingPolicy("clock", False, None, None, expected_hz)
        warnings.append(
            f"NO VSYNC: {why}. Stimuli are timed by the clock, not by frames; durations are accurate to "
            "about one flip, but what the participant sees may tear. Do not collect real data on this display."
        )
        if expected_hz is not None:
            refuse = (
                f"the spec expects a {expected_hz:g} Hz display but vertical sync was not detected ({why}); "
                "pass --allow-refresh-mismatch to run anyway, timed by the clock"
            )
    if refuse and allow_mismatch:
        warnings.append(f"overridden with --allow-refresh-mismatch: {refuse}")
        refuse, policy.overridden = None, True
    policy.refuse = refuse
    policy.warnings = warnings
    return policy


def frame_quantisation_warnings(policy: TimingPolicy, durations_ms: dict[str, float]) -> list[str]:
    """Warn when a spec duration is not a whole number of frames (it will be rounded)."""
    out: list[str] = []
    if policy.mode != "frames":
        return out
    for name, ms in durations_ms.items():
        if ms <= 0:
            continue
        shown = policy.planned_ms(ms)
        if abs(shown - ms) > 0.5:
            out.append(f"{name}={ms:g} ms is {policy.frames(ms)} frames = {shown:.1f} ms at {policy.refresh_hz:.2f} Hz")
    return out


def measure_refresh(win: Any, n_intervals: int = 120) -> RefreshMeasurement:
    """Measure the display with PsychoPy's own estimate plus a run of raw flip intervals."""
    rate = win.getActualFrameRate(nIdentical=20, nMaxFrames=240, nWarmUpFrames=20, threshold=1)
    stamps: list[float] = []
    for _ in range(n_intervals + 1):
        stamps.append(win.flip())
    intervals = [(b - a) * 1000.0 for a, b in zip(stamps, stamps[1:], strict=False)]
    return RefreshMeasurement(psychopy_rate_hz=float(rate) if rate else None, intervals_ms=intervals)


def duration_errors(measured_ms: Sequence[float], target_ms: float) -> dict[str, float | None]:
    """Mean and maximum absolute deviation of measured durations from their target."""
    if not measured_ms:
        return {"n": 0, "mean_abs_error_ms": None, "max_abs_error_ms": None}
    errs = [abs(d - target_ms) for d in measured_ms]
    return {"n": len(errs), "mean_abs_error_ms": round(statistics.fmean(errs), 3),
            "max_abs_error_ms": round(max(errs), 3)}
