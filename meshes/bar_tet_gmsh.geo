// flexmbs sample: a 1 m x 0.1 m x 0.1 m steel bar meshed with linear tetrahedra by Gmsh.
// gmsh -3 bar_tet_gmsh.geo -format msh41 -o bar_tet_gmsh.msh
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1.0, 0.1, 0.1};
Mesh.MeshSizeMax = 0.05;
Mesh.Algorithm3D = 1;                       // Delaunay
Physical Volume("bar") = {1};
Physical Surface("root") = Surface In BoundingBox{-1e-6, -1e-6, -1e-6, 1e-6, 0.1 + 1e-6, 0.1 + 1e-6};
Physical Surface("tip") = Surface In BoundingBox{1 - 1e-6, -1e-6, -1e-6, 1 + 1e-6, 0.1 + 1e-6, 0.1 + 1e-6};
