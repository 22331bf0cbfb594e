"""What root may run (paths: files no other user can change) and reads of what another party wrote (bounded)."""
