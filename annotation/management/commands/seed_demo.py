from django.contrib.auth.hashers import make_password

from annotation import demo, services
from common import commands

DEMO_ACCOUNTS = [
    ("admin@example.com", "admin (staff, Django admin)", {"superuser": True}),
    ("manager@example.com", "study manager (staff pages at /staff/)", {"study_manager": True}),
    ("researcher@example.com", "researcher (results and exports)", {"researcher": True}),
    ("annotator1@example.com", "annotator", {}),
    ("annotator2@example.com", "annotator", {}),
    ("annotator3@example.com", "annotator", {}),
]


class Command(commands.Command):
    help = "Create (or refresh) the demo accounts and print how to log in."

    def add_arguments(self, parser):
        parser.add_argument(
            "--password", default="chatanime-demo", help="password for every demo account"
        )

    def handle(self, *args, password: str, **options):
        # One hash for the six accounts: hashing is slow on purpose, and they share it.
        password_hash = make_password(password)
        users = {
            email: services.account_ensure(
                email=email, password=password, password_hash=password_hash, **flags
            )
            for email, _role, flags in DEMO_ACCOUNTS
        }
        annotators = [user for email, user in users.items() if email.startswith("annotator")]
        study = demo.demo_prepare(annotators=annotators)
        simulated = demo.demo_results_prepare()
        if simulated is not None:
            self.stdout.write(
                f"Study '{simulated.slug}' is filled with simulated judgments: see /results/{simulated.slug}/"
            )
        if study is None:
            self.stdout.write(
                "No answers imported yet: import some, then run seed_demo again for a demo study."
            )
        else:
            self.stdout.write(
                f"Study '{study.slug}' is open with {study.items.count()} items; "
                "the demo annotators are approved for all its characters."
            )
        self.stdout.write(
            "Demo accounts (log in at /accounts/login/ on the address the server prints):"
        )
        for email, role, _ in DEMO_ACCOUNTS:
            self.stdout.write(f"  {email:<26} password: {password:<16} {role}")
