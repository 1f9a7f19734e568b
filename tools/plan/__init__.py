"""unblock plan: restructures the loop nests of a C function over disk-resident
arrays so that iterations touching the same disks run together (disk reuse), and
advises file layouts.  See docs/plan.md."""


class PlanError(Exception):
    """A one-line error for the user (bad spec, kernel outside the subset)."""
