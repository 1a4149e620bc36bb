#include "mesh/mesh.h"
int main() { return 0; }
