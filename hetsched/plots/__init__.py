"""Pictures (matplotlib, headless): Gantt charts of task schedules, JCT CDFs of simulated
policies, ratio histograms of bound audits."""

from hetsched.plots.audit import draw_audit_histogram
from hetsched.plots.cdf import draw_jct_cdf
from hetsched.plots.gantt import draw_gantt

__all__ = ["draw_audit_histogram", "draw_gantt", "draw_jct_cdf"]
