"""Seasonal promotions."""

from .models import Product


class Promotion:
    """A discount on some products."""

    def __init__(self, percent: float) -> None:
        self.percent = percent

    def apply(self, product: Product) -> Product:
        return product.discounted(self.percent)


def summer_sale(products: list[Product]) -> list[Product]:
    sale = Promotion(20)
    return [sale.apply(product) for product in products]
