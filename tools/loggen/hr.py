"""HR: badge swipes, employee directory, department history, timesheets."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import day, ordered, same_second, ties, ts, twins, versions

DOORS = ["HQ-1-MAIN", "HQ-1-SIDE", "HQ-3-LAB", "HQ-4-EXEC", "WH-0-DOCK", "WH-1-OFFICE",
         "LAB-2-CLEAN"]


def gen_badge_swipes_enriched() -> dict[str, list[dict]]:
    rng = random.Random(20240902)
    start = dt.datetime(2024, 9, 2)
    employees = rng.sample(range(1000, 2000), 24)
    rows: list[dict] = []
    for day_number in range(12):
        base = start + dt.timedelta(days=day_number)
        for employee in rng.sample(employees, 12):
            night = employee % 5 == 0
            enter = base + dt.timedelta(hours=21 if night else 7, seconds=rng.randrange(0, 7200))
            leave = enter + dt.timedelta(hours=rng.randint(6, 9), seconds=rng.randrange(0, 3600))
            door = rng.choice(DOORS)
            rows.append({"badge_id": f"B{employee:05d}", "employee_id": employee,
                         "door_id": door, "direction": "in", "swiped_at": enter})
            rows.append({"badge_id": f"B{employee:05d}", "employee_id": employee,
                         "door_id": door, "direction": "out", "swiped_at": leave})
        for _ in range(2):  # visitor badges belong to nobody
            enter = base + dt.timedelta(hours=9, seconds=rng.randrange(0, 6 * 3600))
            rows.append({"badge_id": f"V{rng.randint(1, 40):03d}", "employee_id": None,
                         "door_id": "HQ-1-MAIN", "direction": "in", "swiped_at": enter})
    twins(rng, rows, 8)  # a slow reader registers one swipe twice with two swipe ids
    ties(rng, rows, "swiped_at", "badge_id", 10)
    rows.sort(key=lambda r: (r["swiped_at"], r["badge_id"]))
    swipe_id = 40_000
    records = []
    for row in rows:
        swipe_id += rng.choice([1, 1, 1, 3])
        records.append({**row, "swipe_id": swipe_id, "swiped_at": ts(row["swiped_at"])})
    return {"badge_swipes": ordered(records, "swiped_at", "swipe_id")}


FIRST = ["Ana", "Ben", "Chloé", "Dmitri", "Eun-ji", "Farah", "Gus", "Hiro", "Ines", "Jamal",
         "Kofi", "Lena", "Mateo", "Nia", "Owen", "Priya", "Quinn", "Rosa", "Sven", "Tariq"]
LAST = ["Okafor", "Lindqvist", "García", "Nguyen", "Schmidt", "Kowalski", "O'Brien", "Haddad",
        "Tanaka", "Rossi", "Dubois", "Patel"]
DEPARTMENTS = ["Engineering", "Finance", "Sales", "Support", "Operations", "People", None]
TITLES = ["Analyst", "Engineer", "Senior Engineer", "Manager", "Specialist", "Director"]


def gen_employee_directory() -> dict[str, list[dict]]:
    rng = random.Random(20240108)
    start = dt.datetime(2024, 1, 8, 9, 0, 0)
    employees = rng.sample(range(10_000, 11_000), 70)
    rows: list[dict] = []
    state: dict[int, dict] = {}
    for employee, version, when in versions(rng, employees, start, 25, [1, 2, 2, 3, 4, 5],
                                            (3600, 9 * 86400)):
        if version == 1 or state[employee]["status"] == "terminated":
            state[employee] = {
                "full_name": f"{rng.choice(FIRST)} {rng.choice(LAST)}",
                "title": rng.choice(TITLES), "department": rng.choice(DEPARTMENTS),
                "manager_id": rng.choice([None, *employees[:8]]), "status": "active"}
        else:
            current = dict(state[employee])
            change = rng.choice(["title", "department", "manager", "leave", "terminate",
                                 "return"])
            if change == "title":
                current["title"] = rng.choice(TITLES)
            elif change == "department":
                current["department"] = rng.choice(DEPARTMENTS)
            elif change == "manager":
                current["manager_id"] = rng.choice([None, *employees[:8]])
            elif change == "leave":
                current["status"] = "on_leave"
            elif change == "terminate":
                current["status"] = "terminated"
            else:
                current["status"] = "active"
            state[employee] = current
        rows.append({"employee_id": employee, "version": version, **state[employee],
                     "changed_at": when})
    same_second(rng, rows, "changed_at", "employee_id", 10)
    rows.sort(key=lambda r: (r["changed_at"], r["employee_id"], r["version"]))
    change_id = 0
    records = []
    for row in rows:
        change_id += rng.choice([1, 1, 2])
        records.append({**row, "change_id": change_id, "changed_at": ts(row["changed_at"])})
    return {"employee_changes": ordered(records, "changed_at", "change_id")}


COST_CENTERS = {"Engineering": "CC-100", "Finance": "CC-200", "Sales": "CC-300",
                "Support": "CC-400", "Operations": "CC-500", "People": "CC-600"}


def gen_employee_department_scd2() -> dict[str, list[dict]]:
    rng = random.Random(20240205)
    start = dt.datetime(2024, 2, 5, 8, 0, 0)
    employees = rng.sample(range(20_000, 21_000), 60)
    rows: list[dict] = []
    for employee, version, when in versions(rng, employees, start, 20, [1, 2, 3, 4, 5, 6],
                                            (86400, 12 * 86400)):
        department = rng.choice(list(COST_CENTERS))
        # interim assignments have no cost center yet
        cost_center = None if rng.random() < 0.12 else COST_CENTERS[department]
        rows.append({"employee_id": employee, "version": version, "department": department,
                     "cost_center": cost_center, "effective_at": when})
    same_second(rng, rows, "effective_at", "employee_id", 10)
    rows.sort(key=lambda r: (r["effective_at"], r["employee_id"], r["version"]))
    change_id = 0
    records = []
    for row in rows:
        change_id += rng.choice([1, 1, 2])
        records.append({**row, "change_id": change_id, "effective_at": ts(row["effective_at"])})
    return {"department_assignments": ordered(records, "effective_at", "change_id")}


def gen_weekly_hours_by_department() -> dict[str, list[dict]]:
    rng = random.Random(20240610)
    start = dt.datetime(2024, 6, 10, 17, 0, 0)
    employees = {e: rng.choice(["Engineering", "Support", "Operations", None])
                 for e in rng.sample(range(30_000, 31_000), 20)}
    entries = [f"TS-{n}" for n in rng.sample(range(10_000, 99_999), 95)]
    owner = {entry: rng.choice(list(employees)) for entry in entries}
    rows: list[dict] = []
    for entry, revision, when in versions(rng, entries, start, 21, [1, 1, 2, 2, 3, 4],
                                          (3600, 3 * 86400)):
        employee = owner[entry]
        if revision == 1:
            work_date = (when - dt.timedelta(hours=rng.randint(0, 30))).date()
        status = "submitted" if revision == 1 else str(
            rng.choice(["approved", "approved", "submitted", "deleted"]))
        rows.append({"entry_id": entry, "revision": revision, "employee_id": employee,
                     "department": employees[employee], "work_date": day(work_date),
                     "hours": None if status == "deleted" else
                     f"{rng.choice([4, 6, 7.5, 8, 8, 9.25]):.2f}",
                     "status": status, "revised_at": when})
    same_second(rng, rows, "revised_at", "entry_id", 10)
    rows.sort(key=lambda r: (r["revised_at"], r["entry_id"], r["revision"]))
    revision_id = 0
    records = []
    for row in rows:
        revision_id += rng.choice([1, 1, 2])
        records.append({**row, "revision_id": revision_id, "revised_at": ts(row["revised_at"])})
    return {"timesheet_revisions": ordered(records, "revised_at", "revision_id")}


GENERATORS = {
    "weekly_hours_by_department": gen_weekly_hours_by_department,
    "badge_swipes_enriched": gen_badge_swipes_enriched,
    "employee_directory": gen_employee_directory,
    "employee_department_scd2": gen_employee_department_scd2,
}
