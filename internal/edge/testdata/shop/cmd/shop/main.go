// Command shop serves the shop's API.
package main

import (
	"fmt"

	"example.com/shop/internal/api"
	"example.com/shop/internal/orders"
)

func main() {
	fmt.Println(api.New(orders.New()).Addr())
}
