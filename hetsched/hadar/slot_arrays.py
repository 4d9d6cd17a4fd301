"""One slot of DP_allocation as the arrays its compiled search works on
(:mod:`hetsched.hadar.find_kernel`, :mod:`hetsched.hadar.bnb_kernel`), by queue position i rather
than job index."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hetsched.hadar import bnb_kernel, find_kernel, progress_kernel, state_table, type_bound
from hetsched.hadar.job_table import JobTable
from hetsched.hadar.slot import Candidate, Slot


@dataclass(frozen=True)
class SlotArrays:
    """What the compiled search needs of one slot (the kernel's module doc says what each is)."""

    slot: Slot
    free0: np.ndarray  # [h * R + r] free GPUs
    cap: np.ndarray  # c[h, r]
    mclass: np.ndarray  # a machine's capacity class (equal rows, equal class)
    base: int  # one more than the largest cell
    order: np.ndarray  # [i, :n_order[i]] usable types, fastest first (line 23)
    n_order: np.ndarray
    need: np.ndarray  # W_i
    thr: np.ndarray  # X_i^r
    util: np.ndarray  # U_i at the rate of a gang whose slowest type is r
    price: np.ndarray  # k(g) of cell (h, r), (5)
    price_rank: np.ndarray  # price[h, r, g] = price_sorted[price_rank[h, r, g]]
    price_sorted: np.ndarray
    suffix_value: np.ndarray | None  # V(G) of the queue from idx (None: :meth:`bounded`)
    lam: np.ndarray  # the type bound's multipliers (:mod:`hetsched.hadar.type_bound`; 0: off)
    suffix_net: np.ndarray | None  # its knapsack of net payoffs p_j from idx (inf or None: off)
    rank: np.ndarray | None  # [k, i]: i's position in ranking k (u_i / W_i; p_i / W_i, LP)
    comm_cost: float
    min_cost: bool  # FIND_ALLOC's rule: "min-cost" (line 28) or "max-payoff"
    ordered: bool = False  # the search explores the child of the larger bound first
    utility_name: str | None = None  # the utility (None: the instance's)
    numer: np.ndarray | None = None  # U_i(d) * d per queue position (utility.numerators)
    table: JobTable | None = None  # the jobs' rows these arrays were read from
    at: np.ndarray | None = None  # each queue position's row in ``table``
    # the replay's work arrays (find_kernel.scratch), handed from slot to slot by ``like``
    work: tuple | None = None

    @classmethod
    def of(
        cls,
        slot: Slot,
        utility_name: str | None = None,
        comm_cost: float = 0.0,
        select: str = "min-cost",
        like: SlotArrays | None = None,
        table: JobTable | None = None,
    ) -> SlotArrays:
        """The arrays of ``slot``; each value is computed as the literal FIND_ALLOC
        (:func:`hetsched.hadar.dp_allocation.find_alloc`) computes it, in the same order.
        ``like``: the arrays of another slot (the last one), whose price tables are taken as
        they are where its view and price function are this slot's. ``table``: the jobs' rows
        (:class:`hetsched.hadar.job_table.JobTable`) for the view and utility, built once by an
        online run (default: built for the queue)."""
        view, queue, prices = slot.view, slot.queue, slot.prices
        if table is None or table.view is not view or table.utility_name != utility_name:
            table = JobTable.of(view, utility_name, queue)
        at = table.at(queue)
        if like is not None and like.slot.view is view and like.slot.prices == prices:
            cap, price, price_rank, price_sorted = (
                like.cap,
                like.price,
                like.price_rank,
                like.price_sorted,
            )
        else:
            cap, price, price_rank, price_sorted = cls._price_tables(view, prices)
        n_types = cap.shape[1]
        if like is not None and like.slot.view is view and slot.free is like.slot.free is None:
            free0 = like.free0  # the whole cluster free, as the last slot's (read, not written)
        else:
            free0 = slot.free_gpus().astype(np.int64).ravel()
        empty = np.zeros((0, 0))  # the utilities and what depends on them: :meth:`with_progress`
        fields = dict(  # without the frozen class's __init__ (a field at a time: 9 us a slot)
            slot=slot,
            free0=free0,
            cap=cap,
            mclass=view.machine_class,
            base=price.shape[2],
            order=table.order[at],
            n_order=table.n_order[at],
            need=table.need[at],
            thr=table.thr[at],
            util=empty,
            price=price,
            price_rank=price_rank,
            price_sorted=price_sorted,
            suffix_value=None,
            lam=np.zeros(n_types),  # the type bound off (:meth:`with_type_bound`)
            suffix_net=None,  # off, as inf (:meth:`bounded`)
            rank=None,
            comm_cost=float(comm_cost),
            min_cost=select == "min-cost",
            ordered=False,
            utility_name=utility_name,
            numer=table.numer[at],
            table=table,
            at=at,
            work=(
                like.work
                if like is not None and like.work is not None and like.cap.shape == cap.shape
                else find_kernel.scratch(*cap.shape)
            ),
        )
        arrays = object.__new__(cls)
        arrays.__dict__.update(fields)
        return arrays.with_progress(slot)

    @staticmethod
    def _price_tables(view, prices) -> tuple[np.ndarray, ...]:
        """(cap, price, price_rank, price_sorted): k(g) of (5) for each cell and level."""
        cap = view.capacity.astype(np.int64)
        c_max = int(cap.max()) if cap.size else 0
        price = np.zeros((*cap.shape, c_max + 1))
        levels_of: dict[int, list[float]] = {}  # k(g) depends on the cell's capacity alone
        for h, r in zip(*np.nonzero(cap > 0)):
            c = int(cap[h, r])
            if c not in levels_of:
                levels_of[c] = [prices.price(np.int64(g), cap[h, r]) for g in range(c + 1)]
            price[h, r, : c + 1] = levels_of[c]
        levels = np.arange(c_max + 1) <= cap[cap > 0][:, None]  # the levels a cell can be at
        price_sorted = np.unique(price[cap > 0][levels])
        return cap, price, np.searchsorted(price_sorted, price).astype(np.int64), price_sorted

    def with_progress(self, slot: Slot) -> SlotArrays:
        """The arrays of ``slot``, a later slot of the same queue (so of the same prices
        (6)-(7), which depend on the queue's jobs alone): only the utilities, and the bound and
        ranking built on them, depend on the jobs' progress and the slot; the utilities are
        computed again, the bound when a search asks (:meth:`bounded`); the type bound is off,
        as from :meth:`of`."""
        same = slot.queue is self.slot.queue or list(slot.queue) == list(self.slot.queue)
        if slot.view is not self.slot.view or not same:
            raise ValueError("with_progress takes a slot of the same view and queue")
        view = slot.view
        # the queue's jobs: the table's rows where it has one row a job of the view
        jobs = self.at if self.table.jobs is None else np.asarray(slot.queue, dtype=np.int64)
        # a gang whose slowest type is r: its rate (view.rate), the slots it needs, the JCT
        # (view.jct) and U_i there, one compiled call; the branch and bound's arrays on them
        # when a search asks (:meth:`bounded`: a slot the plan's DP solves needs none)
        util = progress_kernel.utilities(
            self.thr,
            self.need,
            view.progress == "per-worker",
            float(view.slot_seconds),
            np.asarray(slot.remaining, dtype=float)[jobs],
            int(slot.t),
            self.table.arrival[self.at],  # the queue's, not the whole trace's
            int(view.jct_offset),
            self.numer,
        )
        if self.ordered:  # the type bound was on: off again, as from :meth:`of`
            lam, suffix_net = np.zeros_like(self.lam), None
        else:  # off already: its arrays are read, never written, so they serve as they are
            lam, suffix_net = self.lam, self.suffix_net
        return self._with(
            slot=slot,
            util=util,
            suffix_value=None,
            lam=lam,
            suffix_net=suffix_net,
            rank=None,
            ordered=False,
        )

    def bounded(self) -> SlotArrays:
        """The arrays with the branch and bound's knapsacks V(G) of each queue suffix and its
        ranking (best u/W first) on the utilities (:func:`hetsched.hadar.progress_kernel.bound`),
        and the type bound's knapsacks as off where it is, worked out where they are not yet."""
        if self.suffix_value is not None:
            return self
        n_free = int(self.free0.sum())
        suffix_value, rank = progress_kernel.bound(self.util, self.thr, self.need, n_free)
        suffix_net = self.suffix_net  # the type bound off: no net payoff bounds the knapsack
        if suffix_net is None:
            suffix_net = np.full((len(self.need) + 1, n_free + 1), np.inf)
        return self._with(suffix_value=suffix_value, rank=rank, suffix_net=suffix_net)

    def _with(self, **changes) -> SlotArrays:
        """:func:`dataclasses.replace` without running ``__init__`` again: a later slot changes
        a few of the fields, every slot (replace took about a fifth of :meth:`with_progress`)."""
        new = object.__new__(SlotArrays)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    def with_type_bound(self) -> SlotArrays:
        """The same slot with the search's second bound (:mod:`hetsched.hadar.type_bound`: the
        types' capacities relaxed with the LP's multipliers, one LP a slot), two more rankings
        for the first incumbents (by net payoff p_i / W_i, and by the part of each job the LP
        takes: its rounding), and the child of the larger bound explored first."""
        least, free_types = type_bound.least_type_prices(self.price, self.cap, self.free0)
        args = (self.util, self.order, self.n_order, self.need)
        lam, share = type_bound.type_multipliers(*args, least, free_types)
        net = type_bound.net_payoffs(*args, lam + least)
        by_net = _best_first(net, self.need)
        suffix_net = bnb_kernel.suffix_knapsack(self.need, net, by_net, int(self.free0.sum()))
        by_lp = _best_first(share + 1e-9 * net, np.ones_like(self.need))  # ties: by net payoff
        b = self.bounded()
        rank = np.vstack([b.rank[:1], _positions(by_net), _positions(by_lp)])
        return replace(b, lam=lam, suffix_net=suffix_net, rank=rank, ordered=True)

    def find_args(self) -> tuple:
        """FIND_ALLOC's arrays, in the order of :func:`hetsched.hadar.find_kernel.find`."""
        return (
            self.cap,
            self.mclass,
            self.base,
            self.order,
            self.n_order,
            self.need,
            self.thr,
            self.util,
            self.price,
            self.comm_cost,
            self.min_cost,
        )

    def bound_args(self) -> tuple:
        """The bound's arrays, in the order of :func:`hetsched.hadar.bnb_kernel.search`."""
        w_max = int(self.need.max()) if len(self.need) else 0
        b = self.bounded()
        return (
            b.price_rank,
            b.price_sorted,
            b.suffix_value,
            b.lam,
            b.suffix_net,
            b.rank,
            w_max,
            bool(b.ordered),
        )

    def key_args(self) -> tuple[int, int]:
        """How the state tables pack the free GPUs (:func:`hetsched.hadar.state_table.key_layout`)."""
        return state_table.key_layout(self.cap)

    def classes(self) -> np.ndarray:
        """Each job's class for :func:`hetsched.hadar.dp_kernel.reach`: jobs with the same
        type order, the same ties in throughput between consecutive types of it (a gang's
        slowest type is the first of the least throughput) and the same gang size
        (:func:`hetsched.hadar.job_table.class_rows`) under the min-cost rule, numbered in
        the rows' lexicographic order; every job its own under max-payoff."""
        if not self.min_cost or not len(self.need):
            return np.arange(len(self.need), dtype=np.int64)
        ids = self.table.class_id[self.at]  # ranks in the table's order: the same order
        return np.searchsorted(np.unique(ids), ids).astype(np.int64)

    def find(self, i: int, free: np.ndarray) -> Candidate | None:
        """FIND_ALLOC for queue position i with ``free`` [h, r] GPUs (left as they are), by the
        compiled search's own code (:func:`hetsched.hadar.find_kernel.find`)."""
        flat = np.array(free, dtype=np.int64).ravel()  # a copy: the replay takes the gang out
        return self._replayed(np.array([i], dtype=np.int64), flat)[0]

    def chosen(self, taken: np.ndarray) -> dict[int, Candidate]:
        """The candidates of the jobs at queue positions ``taken``, each found at the GPUs the
        ones before it leave: job -> candidate, in queue order."""
        positions = np.ascontiguousarray(taken, dtype=np.int64)
        flat = np.ascontiguousarray(self.slot.free_gpus(), dtype=np.int64).ravel()
        out: dict[int, Candidate] = {}
        for i, cand in zip(positions.tolist(), self._replayed(positions, flat)):
            assert cand is not None  # the search took it at this very state
            out[self.slot.queue[i]] = cand
        return out

    def gangs(self, taken: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`chosen` as arrays, for a caller that needs the gangs alone: (the jobs, the
        number of (machine, type, count) rows of each, the rows in order)."""
        positions = np.ascontiguousarray(taken, dtype=np.int64)
        payoff, _, count, triples = self._replay(positions, self.free0.copy())
        if len(payoff) and payoff.min() <= 0.0:
            raise RuntimeError("a chosen job has no candidate at the GPUs the search took it at")
        queue = self.at if self.table.jobs is None else np.asarray(self.slot.queue, np.int64)
        return queue[positions], count, triples

    def _replay(self, positions: np.ndarray, flat: np.ndarray) -> tuple[np.ndarray, ...]:
        """(payoff, cost, rows, triples) of :func:`hetsched.hadar.find_kernel.replay` at the flat
        free GPUs ``flat`` (updated)."""
        work = self.work if self.work is not None else find_kernel.scratch(*self.cap.shape)
        return find_kernel.replay(positions, flat, self.find_args(), work)

    def _replayed(self, positions: np.ndarray, flat: np.ndarray) -> list[Candidate | None]:
        """Each position's candidate (None: none) at the flat free GPUs the ones before it leave
        (``flat`` is updated): the gangs replayed compiled (:meth:`_replay`), the rates by the
        view's own :meth:`rate`."""
        payoff, cost, count, triples = self._replay(positions, flat)
        out: list[Candidate | None] = []
        rows = triples.tolist()
        at = 0
        for i, p, c, k in zip(positions.tolist(), payoff.tolist(), cost.tolist(), count.tolist()):
            if p <= 0.0:
                out.append(None)
                continue
            gang = tuple(tuple(row) for row in rows[at : at + k])
            at += k
            j = self.slot.queue[i]
            rate = self.slot.view.rate(j, sorted({r for _, r, _ in gang}), int(self.need[i]))
            out.append(Candidate(gang, rate, c, p))
        return out


def _best_first(value: np.ndarray, need: np.ndarray) -> np.ndarray:
    """The jobs' queue positions in the order of value / W, best first (ties: queue order)."""
    return np.argsort(-value / np.maximum(need, 1), kind="stable").astype(np.int64)


def _positions(order: np.ndarray) -> np.ndarray:
    """Each job's position in ``order``."""
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank
