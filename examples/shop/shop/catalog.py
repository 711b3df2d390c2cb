"""The catalogue of products on sale."""

from .models import Product

CROISSANT = Product("croissant", 1.2)
CAFE = Product("café crème", 2.5)


def find(name: str, products: list[Product]) -> Product | None:
    """The product with this name, if any."""
    for product in products:
        if product.name == name:
            return product
    return None


def everything() -> list[Product]:
    return [CROISSANT, CAFE]
