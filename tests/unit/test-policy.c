#include "../lib/tap.h"
int main(void)
{
	ok(1, "placeholder: the parser tests follow");
	return done_testing();
}
