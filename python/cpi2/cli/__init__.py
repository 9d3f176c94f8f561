"""cpi2ctl: the CPI2 operator CLI (forensics queries, incident plots, control commands)."""
