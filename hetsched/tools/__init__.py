"""Tools over results: ``show`` (reports, Gantt charts, audit plots) and the generated docs."""
