package priority_test

import (
	"context"
	"fmt"

	"github.com/fusebox-go/fusebox/priority"
)

func Example() {
	ctx := priority.With(context.Background(), priority.Sheddable)
	fmt.Println(priority.From(ctx), priority.From(context.Background()))
	// Output: sheddable default
}
