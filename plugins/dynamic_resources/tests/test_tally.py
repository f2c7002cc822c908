"""ClaimTally: the claims and their allocated devices, kept across cycles, always equal to a
count of the listed claims made afresh."""

from __future__ import annotations

import pytest
from dra_builders import DEVICE_1, DEVICE_2, DRIVER_A, POOL_1, REQ_0, claim, result
from hypothesis import given, settings
from hypothesis import strategies as st
from kubesched_dynamic_resources.allocator import claim_key
from kubesched_dynamic_resources.tally import ClaimTally, allocated_devices


def allocated(name, *devices, admin=False):
    out = claim(name)
    out["status"] = {
        "allocation": {
            "devices": {"results": [result(REQ_0, DRIVER_A, POOL_1, d, admin) for d in devices]}
        }
    }
    return out


class Store:
    """A lister's store: a new object for each write, deletions close the gap."""

    def __init__(self, *claims):
        self.items = list(claims)

    def __call__(self):
        return list(self.items)


def recount(claims):
    """What the tally must say: every listed claim read again."""
    devices = set()
    for c in claims:
        devices.update(allocated_devices((c.get("status") or {}).get("allocation")))
    return devices, {claim_key(c): c for c in claims}


def assert_current(tally, store):
    by_key = tally.by_key()
    devices, want = recount(store.items)
    assert tally.allocated() == devices
    assert dict(by_key) == want
    assert dict(tally.by_uid()) == {c["metadata"]["uid"]: c for c in store.items}


D1, D2 = (DRIVER_A, POOL_1, DEVICE_1), (DRIVER_A, POOL_1, DEVICE_2)


@pytest.mark.parametrize(
    ("change", "want"),
    [
        pytest.param(lambda items: items.append(allocated("c", DEVICE_2)), {D1, D2}, id="added"),
        pytest.param(lambda items: items.__setitem__(0, claim("a")), set(), id="deallocated"),
        pytest.param(lambda items: items.pop(0), set(), id="allocated-one-deleted"),
        pytest.param(lambda items: items.pop(1), {D1}, id="one-before-the-end-deleted"),
        pytest.param(
            lambda items: items.__setitem__(1, allocated("b", DEVICE_2)), {D1, D2}, id="allocated"
        ),
        pytest.param(
            lambda items: items.__setitem__(1, allocated("b", DEVICE_2, admin=True)),
            {D1},
            id="admin-access-holds-nothing",
        ),
        pytest.param(lambda items: items.reverse(), {D1}, id="reordered"),
    ],
)
def test_the_tally_follows_each_change_of_the_claims(change, want):
    store = Store(allocated("a", DEVICE_1), claim("b"), claim("z"))
    tally = ClaimTally(store)
    assert tally.by_key()["default/a"] is store.items[0]
    assert tally.allocated() == {D1}
    change(store.items)
    assert_current(tally, store)
    assert tally.allocated() == want


def test_a_device_two_claims_hold_stays_in_use_until_both_let_go():
    store = Store(allocated("a", DEVICE_1), allocated("b", DEVICE_1))
    tally = ClaimTally(store)
    tally.refresh()
    store.items.pop(0)
    tally.refresh()
    assert tally.allocated() == {D1}
    store.items.pop(0)
    tally.refresh()
    assert tally.allocated() == set()


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "allocate", "deallocate", "delete"]),
        st.integers(0, 7),
        st.sampled_from([DEVICE_1, DEVICE_2, "device-3"]),
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(ops=_OPS, refresh_every=st.integers(1, 3))
def test_the_tally_equals_a_fresh_count_after_any_changes(ops, refresh_every):
    store = Store()
    tally = ClaimTally(store)
    made = 0
    for step, (op, index, device_name) in enumerate(ops):
        items = store.items
        if op == "add" or not items:
            items.insert(index % (len(items) + 1), claim(f"c{made}"))
            made += 1
        elif op == "allocate":
            at = index % len(items)
            items[at] = allocated(items[at]["metadata"]["name"], device_name)
        elif op == "deallocate":
            at = index % len(items)
            items[at] = claim(items[at]["metadata"]["name"])
        else:
            items.pop(index % len(items))
        if step % refresh_every == 0:
            assert_current(tally, store)
    assert_current(tally, store)
