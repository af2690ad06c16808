"""``torch.backends.mps``: no Apple GPU backend in minigrad."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
