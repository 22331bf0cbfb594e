"""What root may run (paths no other user can change) and bounded reads of what others wrote."""
