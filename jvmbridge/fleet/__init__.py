"""Many hosts: `check` run on each through Ansible (playbook.yml, run.py), and one report over
the documents that come back (report.py)."""
