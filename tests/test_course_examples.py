"""Do the example course files in examples/ load as the grader reads them, and name the example class?"""

from autograder.admin.overrides import check_students, load_overrides
from autograder.admin.policy import load_policy
from autograder.admin.roster import load_roster
from autograder.admin.settings import CORE_IDS, DEFAULT_SETTINGS
from autograder.course.stages import ROOT

EXAMPLES = ROOT / "examples"


def test_the_example_policys_grade_table_spells_out_the_defaults():
    """The [grade] table an instructor copies names every core stage and the default bonus rule, so copying the
    example changes nothing until they edit it."""
    text = (EXAMPLES / "course-policy.example.toml").read_text()
    assert "\n[grade]\n" in text and all(f'"{stage_id}"' in text.split("\n[grade]\n")[1] for stage_id in CORE_IDS)
    assert load_policy(EXAMPLES / "course-policy.example.toml").settings == DEFAULT_SETTINGS


def test_the_example_overrides_load_and_name_students_of_the_example_roster():
    overrides = load_overrides(EXAMPLES / "course-overrides.example.toml")
    roster = load_roster(EXAMPLES / "roster.example.csv")
    check_students(overrides, set(roster.students), "the example roster")
    assert {change.action for change in overrides.changes.values()} == {"excuse", "set", "adjust"}
    assert {regrade.outcome for _, regrade in overrides.regrades} == {"granted", "denied", "pending"}
