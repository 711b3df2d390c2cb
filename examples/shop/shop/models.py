"""Products and orders."""

from dataclasses import dataclass, field


@dataclass
class Product:
    """Something the shop sells."""

    name: str
    price: float

    def discounted(self, percent: float) -> "Product":
        """A copy of this product at a lower price."""
        return Product(self.name, round(self.price * (1 - percent / 100), 2))


@dataclass
class Order:
    """Products a customer buys, with quantities."""

    lines: list[tuple[Product, int]] = field(default_factory=list)

    def add(self, product: Product, quantity: int = 1) -> None:
        self.lines.append((product, quantity))

    def total(self) -> float:
        result = 0.0
        for product, quantity in self.lines:
            result += product.price * quantity
        return result

    def validate(self) -> bool:
        result = all(quantity > 0 for _, quantity in self.lines)
        return result
