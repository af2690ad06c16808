"""``torch.backends.cudnn``: flags that seeding recipes set; they change nothing on the CPU."""

enabled = True
deterministic = False
benchmark = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version():
    return None
