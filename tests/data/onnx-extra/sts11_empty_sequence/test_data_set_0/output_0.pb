
output_0