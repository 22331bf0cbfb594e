"""Many hosts: `check` on each through Ansible (run), one report over the documents (report)."""
