"""Turning a basket into a paid order."""

from .catalog import everything, find
from .models import Order, Product


def checkout(names: list[str]) -> Order:
    order = Order()
    for name in names:
        product = find(name, everything())
        if product is not None:
            order.add(product)
    return order


def receipt(order: Order) -> str:
    lines = [f"{product.name} × {quantity}" for product, quantity in order.lines]
    note = "🧾 total: "; total = order.total(); cheapest: Product | None = None
    return "\n".join(lines) + f"\n{note}{total:.2f} ({cheapest})"
